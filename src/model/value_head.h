#pragma once
// The PPO critic's head: one fp32 Linear(hidden, 1) over the policy's final hidden states, one
// value per position. Saved as safetensors under TRL's AutoModelForCausalLMWithValueHead names
// (v_head.summary.weight [1, hidden], v_head.summary.bias [1]).
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sparserl {

class value_head {
 public:
  static constexpr const char* weight_name = "v_head.summary.weight";
  static constexpr const char* bias_name = "v_head.summary.bias";

  // nn.Linear's default init (weight and bias U(-1/sqrt(hidden), 1/sqrt(hidden))) from a CPU
  // generator seeded with `seed`, so a seed gives the same head on every device.
  value_head(int64_t hidden_size, uint64_t seed, torch::Device device = torch::kCPU);

  // hidden [batch, t, hidden_size] in any float dtype -> fp32 values [batch, t].
  torch::Tensor forward(const torch::Tensor& hidden) const;

  std::vector<torch::Tensor> parameters() const { return {weight_, bias_}; }
  int64_t hidden_size() const { return weight_.size(1); }
  const torch::Tensor& weight() const { return weight_; }
  const torch::Tensor& bias() const { return bias_; }

  void save(const std::string& path) const;  // atomic
  // Copies the file's values into this head's tensors (so optimizer references stay valid);
  // throws naming the file and tensor when one is missing, extra, mis-shaped or not float.
  void load(const std::string& path);

 private:
  torch::Tensor weight_;  // [1, hidden], fp32, requires grad
  torch::Tensor bias_;    // [1]
};

}  // namespace sparserl
