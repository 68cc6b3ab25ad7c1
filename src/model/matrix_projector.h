#pragma once
// The trainable map from matrix encodings (model/matrix_encoding.h) to decoder prefix embeddings
// (qwen3_forward_options::prefix_embeds): an MLP feature_dim -> hidden -> hidden (Linear, exact
// GELU, Linear) applied to every token. Saved as one safetensors file whose metadata carries the
// encoding options and hidden size, so a loaded projector encodes matrices the way it was trained.
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/matrix_encoding.h"

namespace sparserl {

struct matrix_projector_options {
  matrix_encoding_options encoding;
  int64_t hidden = 0;  // the decoder's hidden_size
  uint64_t seed = 0;   // initialisation
};

class matrix_projector {
 public:
  // Weights in float32 on the CPU, initialised as torch.nn.Linear does (uniform in +-1/sqrt(fan_in)
  // for weights and biases) from a seeded generator that is the same on every torch version.
  explicit matrix_projector(const matrix_projector_options& options);

  // A projector saved by save(): its options come from the file's metadata. Throws naming the
  // first missing, mis-shaped or mis-typed tensor or malformed metadata.
  static matrix_projector from_file(const std::string& path, torch::Dtype dtype = torch::kFloat32,
                                    torch::Device device = torch::kCPU);

  // Replaces the weights with the file's; refuses a file made with other options (encoding or
  // hidden size), naming the difference.
  void load(const std::string& path);
  // Writes the weights as F32 with the options in the metadata (atomically).
  void save(const std::string& path) const;

  // Moves and casts the weights; they stay trainable leaves.
  void to(torch::Dtype dtype, torch::Device device);

  // [batch, 1 + max_nnz, hidden] in the weights' dtype and device. Every encoding must have this
  // projector's token count and feature width (encode with encoding_options()).
  torch::Tensor forward(const std::vector<const matrix_encoding*>& batch) const;
  // The same from stacked features [batch, tokens, feature_dim] of any float dtype and device.
  torch::Tensor forward(const torch::Tensor& features) const;

  // Stacks encodings into a float32 CPU tensor [batch, tokens, feature_dim], checking their shape.
  torch::Tensor stack(const std::vector<const matrix_encoding*>& batch) const;

  // fc1.weight, fc1.bias, fc2.weight, fc2.bias (requires_grad).
  std::vector<torch::Tensor> parameters() const;

  const matrix_encoding_options& encoding_options() const { return options_.encoding; }
  const matrix_projector_options& options() const { return options_; }
  int64_t feature_dim() const { return 3 * int64_t{options_.encoding.dim}; }
  int64_t tokens() const { return 1 + int64_t{options_.encoding.max_nnz}; }
  int64_t hidden() const { return options_.hidden; }

 private:
  void set_weights(std::vector<torch::Tensor> weights);

  matrix_projector_options options_;
  torch::Tensor fc1_weight_, fc1_bias_, fc2_weight_, fc2_bias_;
};

}  // namespace sparserl
