#pragma once
// The tokenizer.json "normalizer": Unicode normalization forms (through utf8proc), alone or in a
// Sequence; null means none. Qwen2/Qwen3 use NFC.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace sparserl::text {

enum class normal_form { nfc, nfd, nfkc, nfkd };

class normalizer {
 public:
  normalizer() = default;
  explicit normalizer(std::vector<normal_form> steps) : steps_(std::move(steps)) {}

  // Reads the "normalizer" value; throws sparserl::error for a type this tokenizer cannot apply
  // (silently skipping one would give ids that differ from HF's).
  static normalizer from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;

  // `s` (valid UTF-8) after every step.
  std::string apply(std::string_view s) const;
  bool empty() const { return steps_.empty(); }

 private:
  std::vector<normal_form> steps_;
};

}  // namespace sparserl::text
