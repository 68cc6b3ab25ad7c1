#pragma once
// LoRA (Hu et al., 2021) as PEFT's LoraLayer computes it: y = x W^T + s * dropout(x) A^T B^T with
// A [r, in] drawn kaiming-uniform(a = sqrt(5)) (U(-1/sqrt(in), 1/sqrt(in))), B [out, r] zeros (so
// a fresh adapter changes nothing) and s = alpha / r. A and B are fp32 whatever the base dtype,
// as PEFT keeps them by default: the input goes to fp32 for the low-rank product and the update
// back to the base dtype before it is added, so optimizer updates of tiny adapter values are not
// lost to bf16 rounding.
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sparserl {

struct lora_config {
  int rank = 8;
  double alpha = 16;
  double dropout = 0.05;  // on the adapter's input, in training mode only
  // HF module names; for Qwen3 any of q/k/v/o_proj (self_attn) and gate/up/down_proj (mlp).
  std::vector<std::string> target_modules = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                             "gate_proj", "up_proj", "down_proj"};

  double scale() const { return alpha / rank; }
};

// Throws sparserl::error naming `source` when rank <= 0, alpha is not positive and finite,
// dropout is outside [0, 1), or target_modules is empty or repeats a name. (Whether a module
// exists is the model's to check.)
void validate(const lora_config& config, const std::string& source);

// Configs are equal when every field is and the targets are the same set (PEFT stores them as a
// set, so their order carries no meaning).
bool same_lora_config(const lora_config& a, const lora_config& b);

// The adapter of one linear; both undefined where the module is not targeted.
struct lora_linear {
  torch::Tensor a;  // [r, in], fp32
  torch::Tensor b;  // [out, r], fp32

  bool defined() const { return a.defined(); }
};

// A fresh adapter for a [out, in] weight, on `device`: A drawn from `generator` (a CPU generator,
// so the values do not depend on the device), B zeros, both requiring grad.
lora_linear make_lora_linear(int64_t out_features, int64_t in_features, int rank,
                             at::Generator& generator, torch::Device device);

// x W^T, plus the adapter's update when `adapter` is defined. Dropout applies only in training.
torch::Tensor lora_linear_forward(const torch::Tensor& x, const torch::Tensor& weight,
                                  const lora_linear& adapter, double scale, double dropout,
                                  bool training);

// W + s * B A (computed in fp32) in W's dtype and device: the weight that gives the same output
// without the adapter.
torch::Tensor lora_merged_weight(const torch::Tensor& weight, const lora_linear& adapter,
                                 double scale);

}  // namespace sparserl
