#pragma once
// The HF transformers config.json of a Qwen3 causal LM: parsed strictly (every key the decoder
// depends on is typed and range-checked) and written back in a form transformers loads.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sparserl {

struct qwen3_config {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;  // < num_attention_heads means grouped-query attention
  int64_t head_dim = 0;             // explicit in Qwen3 configs (often != hidden / heads)
  int64_t max_position_embeddings = 32768;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  bool tie_word_embeddings = false;
  bool attention_bias = false;
  std::string torch_dtype = "bfloat16";
  std::vector<int64_t> bos_token_ids;  // empty when the config has none (null)
  std::vector<int64_t> eos_token_ids;
};

// `source` names the input in error messages. With allow_other, a model_type other than "qwen3"
// (or none) is accepted as long as the keys parse; otherwise it is an error.
qwen3_config parse_qwen3_config(const nlohmann::json& doc, const std::string& source,
                                bool allow_other = false);
qwen3_config load_qwen3_config(const std::string& path, bool allow_other = false);

// Throws if the dims are inconsistent (the same checks parsing does).
void validate(const qwen3_config& cfg, const std::string& source);

nlohmann::json to_json(const qwen3_config& cfg);
void write_config(const std::string& path, const qwen3_config& cfg);  // atomic

}  // namespace sparserl
