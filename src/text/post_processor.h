#pragma once
// The tokenizer.json "post_processor", reduced to what it does to the ids of one sequence when
// add_special_tokens is true: ids put before and after it. ByteLevel (Qwen2/3) adds none;
// TemplateProcessing's "single" template, BertProcessing and RobertaProcessing add their
// special tokens; Sequence chains them.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace sparserl::text {

class post_processor {
 public:
  post_processor() = default;
  static post_processor from_json(const nlohmann::json& j);  // throws sparserl::error

  void apply(std::vector<int32_t>& ids) const;
  bool adds_tokens() const { return !prefix_.empty() || !suffix_.empty(); }
  std::vector<int32_t> added_ids() const;  // every id apply() may add

 private:
  void parse_into(const nlohmann::json& j);
  void wrap(const std::vector<int32_t>& before, const std::vector<int32_t>& after);

  std::vector<int32_t> prefix_, suffix_;
};

}  // namespace sparserl::text
