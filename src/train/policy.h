#pragma once
// The policy of SparseRL: a Qwen3 decoder, the projector that turns a matrix's sinusoidal encoding
// into prefix embeddings, an optional value head (PPO's critic) and the tokenizer, kept together
// so every trainer and `sparserl generate` feeds the model the same way. A policy directory is an
// HF model directory (config.json, model.safetensors, tokenizer.json) plus projector.safetensors,
// value_head.safetensors and, for LoRA runs, a PEFT adapter in adapter/.
#include <torch/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/lora.h"
#include "model/matrix_encoding.h"
#include "model/matrix_projector.h"
#include "model/qwen3.h"
#include "model/value_head.h"
#include "sparse/csr_matrix.h"
#include "text/tokenizer.h"

namespace sparserl::train {

struct policy_load_options {
  torch::Device device = torch::kCPU;
  torch::Dtype dtype = torch::kFloat32;  // bf16 on GPUs for a frozen LoRA base
  matrix_encoding_options encoding;      // for a new projector (a saved one keeps its own)
  std::optional<lora_config> lora;       // attach new adapters (unless the dir has one)
  bool with_value_head = false;
  uint64_t seed = 0;
};

class policy {
 public:
  // model_dir holds config.json + weights (and maybe projector/value head/adapter files);
  // tokenizer_dir a tokenizer.json (often the same directory).
  static policy load(const std::string& model_dir, const std::string& tokenizer_dir,
                     const policy_load_options& options);
  // A new randomly initialised model of `config` (pre-training from scratch).
  static policy create(const qwen3_config& config, const std::string& tokenizer_dir,
                       const policy_load_options& options);

  // The tensors the optimizer updates, by stable names: "base.<i>" when the base is trained,
  // "lora.<i>" with adapters, "projector.<i>", and "value.<i>" when asked.
  std::map<std::string, torch::Tensor> trainable(bool include_value,
                                                 bool include_projector = true) const;

  // [batch, 1 + max_nnz, hidden] prefix embeddings in the model's dtype and device.
  torch::Tensor prefix(const std::vector<const matrix_encoding*>& encodings) const;
  matrix_encoding encode(const csr_matrix& matrix) const;
  matrix_encoding encode(const csr_matrix& matrix, const matrix_features& features) const;
  int64_t prefix_tokens() const;

  std::vector<int32_t> encode_text(const std::string& text) const;
  int32_t eos_id() const;
  int32_t pad_id() const;

  // Writes an HF directory (merged weights when `merge_lora`) + tokenizer + projector + value
  // head + adapter/ (PEFT) into `dir`.
  void save(const std::string& dir, bool merge_lora = false) const;

  qwen3_model& model() { return *model_; }
  const qwen3_model& model() const { return *model_; }
  const matrix_projector& projector() const { return *projector_; }
  value_head* value() const { return value_.get(); }
  const text::bpe_tokenizer& tokenizer() const { return *tokenizer_; }
  torch::Device device() const { return device_; }
  void set_training(bool on);

 private:
  policy() = default;
  std::shared_ptr<qwen3_model> model_;
  std::shared_ptr<matrix_projector> projector_;
  std::shared_ptr<value_head> value_;
  std::shared_ptr<text::bpe_tokenizer> tokenizer_;
  std::string tokenizer_dir_;
  torch::Device device_ = torch::kCPU;
};

}  // namespace sparserl::train
