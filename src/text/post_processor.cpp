#include "text/post_processor.h"

#include <nlohmann/json.hpp>
#include <string>

#include "sparse/error.h"

namespace sparserl::text {

namespace {

std::vector<int32_t> template_ids(const nlohmann::json& specials, const std::string& name) {
  if (!specials.is_object() || !specials.contains(name) || !specials[name].contains("ids") ||
      !specials[name]["ids"].is_array())
    throw error("post_processor TemplateProcessing: special token '" + name +
                "' has no \"ids\" in \"special_tokens\"");
  return specials[name]["ids"].get<std::vector<int32_t>>();
}

int32_t pair_id(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_array() || j[key].size() != 2 ||
      !j[key][1].is_number_integer())
    throw error(std::string("post_processor: \"") + key + "\" must be [token, id]");
  return j[key][1].get<int32_t>();
}

}  // namespace

post_processor post_processor::from_json(const nlohmann::json& j) {
  post_processor p;
  p.parse_into(j);
  return p;
}

void post_processor::wrap(const std::vector<int32_t>& before, const std::vector<int32_t>& after) {
  prefix_.insert(prefix_.begin(), before.begin(), before.end());
  suffix_.insert(suffix_.end(), after.begin(), after.end());
}

void post_processor::parse_into(const nlohmann::json& j) {
  if (j.is_null()) return;
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw error("post_processor: expected an object with a string \"type\"");
  const std::string type = j["type"];
  if (type == "ByteLevel") return;  // offsets only
  if (type == "Sequence") {
    if (!j.contains("processors") || !j["processors"].is_array())
      throw error("post_processor Sequence: \"processors\" must be an array");
    for (const auto& inner : j["processors"]) parse_into(inner);
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    wrap({pair_id(j, "cls")}, {pair_id(j, "sep")});
  } else if (type == "TemplateProcessing") {
    if (!j.contains("single") || !j["single"].is_array())
      throw error("post_processor TemplateProcessing: \"single\" must be an array");
    std::vector<int32_t> before, after;
    bool seen_sequence = false;
    for (const auto& piece : j["single"]) {
      if (piece.contains("Sequence")) {
        if (seen_sequence || piece["Sequence"].value("id", "A") != "A")
          throw error("post_processor TemplateProcessing: \"single\" must hold sequence A once");
        seen_sequence = true;
      } else if (piece.contains("SpecialToken") && piece["SpecialToken"].contains("id")) {
        const auto ids = template_ids(j.value("special_tokens", nlohmann::json()),
                                      piece["SpecialToken"]["id"].get<std::string>());
        (seen_sequence ? after : before)
            .insert((seen_sequence ? after : before).end(), ids.begin(), ids.end());
      } else {
        throw error("post_processor TemplateProcessing: bad piece " + piece.dump());
      }
    }
    if (!seen_sequence) throw error("post_processor TemplateProcessing: \"single\" lacks $A");
    wrap(before, after);
  } else {
    throw error("post_processor: unsupported type '" + type +
                "' (supported: ByteLevel, TemplateProcessing, BertProcessing, "
                "RobertaProcessing, Sequence, null)");
  }
}

std::vector<int32_t> post_processor::added_ids() const {
  std::vector<int32_t> ids = prefix_;
  ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  return ids;
}

void post_processor::apply(std::vector<int32_t>& ids) const {
  if (!adds_tokens()) return;
  ids.insert(ids.begin(), prefix_.begin(), prefix_.end());
  ids.insert(ids.end(), suffix_.begin(), suffix_.end());
}

}  // namespace sparserl::text
