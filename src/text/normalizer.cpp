#include "text/normalizer.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "sparse/error.h"

namespace sparserl::text {

namespace {

constexpr const char* form_names[] = {"NFC", "NFD", "NFKC", "NFKD"};

utf8proc_option_t options_of(normal_form f) {
  const int base = UTF8PROC_STABLE;
  switch (f) {
    case normal_form::nfc:
      return static_cast<utf8proc_option_t>(base | UTF8PROC_COMPOSE);
    case normal_form::nfd:
      return static_cast<utf8proc_option_t>(base | UTF8PROC_DECOMPOSE);
    case normal_form::nfkc:
      return static_cast<utf8proc_option_t>(base | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    case normal_form::nfkd:
      return static_cast<utf8proc_option_t>(base | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  }
  return static_cast<utf8proc_option_t>(base);
}

// Every character below U+0300 is NFC-stable and none composes with a preceding one, so text
// without a byte >= 0xCC (the lead byte of U+0300) is already NFC: the common ASCII case.
bool trivially_nfc(std::string_view s) {
  return std::none_of(s.begin(), s.end(),
                      [](char c) { return static_cast<unsigned char>(c) >= 0xCC; });
}

std::string normalize(std::string_view s, normal_form f) {
  if (f == normal_form::nfc && trivially_nfc(s)) return std::string(s);
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                   static_cast<utf8proc_ssize_t>(s.size()), &out, options_of(f));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  if (n < 0)
    throw error(std::string("normalizer ") + form_names[static_cast<int>(f)] + ": " +
                utf8proc_errmsg(n));
  return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
}

void parse_into(const nlohmann::json& j, std::vector<normal_form>& steps) {
  if (j.is_null()) return;
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw error("normalizer: expected an object with a string \"type\"");
  const std::string type = j["type"];
  if (type == "Sequence") {
    if (!j.contains("normalizers") || !j["normalizers"].is_array())
      throw error("normalizer Sequence: \"normalizers\" must be an array");
    for (const auto& inner : j["normalizers"]) parse_into(inner, steps);
    return;
  }
  for (int f = 0; f < 4; ++f) {
    if (type == form_names[f]) {
      steps.push_back(static_cast<normal_form>(f));
      return;
    }
  }
  throw error("normalizer: unsupported type '" + type +
              "' (supported: NFC, NFD, NFKC, NFKD, "
              "Sequence, null)");
}

}  // namespace

normalizer normalizer::from_json(const nlohmann::json& j) {
  std::vector<normal_form> steps;
  parse_into(j, steps);
  return normalizer(std::move(steps));
}

nlohmann::json normalizer::to_json() const {
  auto one = [](normal_form f) {
    return nlohmann::json{{"type", form_names[static_cast<int>(f)]}};
  };
  if (steps_.empty()) return nullptr;
  if (steps_.size() == 1) return one(steps_[0]);
  nlohmann::json list = nlohmann::json::array();
  for (normal_form f : steps_) list.push_back(one(f));
  return {{"type", "Sequence"}, {"normalizers", list}};
}

std::string normalizer::apply(std::string_view s) const {
  if (steps_.empty()) return std::string(s);
  std::string out = normalize(s, steps_[0]);
  for (size_t i = 1; i < steps_.size(); ++i) out = normalize(out, steps_[i]);
  return out;
}

}  // namespace sparserl::text
