#include "model/lora.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <set>

#include "sparse/error.h"
#include "sparse/quote_text.h"

namespace sparserl {

void validate(const lora_config& c, const std::string& source) {
  if (c.rank <= 0) throw error(source + ": LoRA rank " + std::to_string(c.rank) + " must be > 0");
  if (!(c.alpha > 0) || !std::isfinite(c.alpha))
    throw error(source + ": LoRA alpha " + std::to_string(c.alpha) + " must be positive");
  if (!(c.dropout >= 0 && c.dropout < 1))
    throw error(source + ": LoRA dropout " + std::to_string(c.dropout) + " must be in [0, 1)");
  if (c.target_modules.empty()) throw error(source + ": LoRA target_modules is empty");
  std::set<std::string> seen;
  for (const std::string& m : c.target_modules)
    if (!seen.insert(m).second)
      throw error(source + ": LoRA target module " + quote_text(m, name_quote_bytes) +
                  " is listed twice");
}

bool same_lora_config(const lora_config& a, const lora_config& b) {
  const std::set<std::string> ta(a.target_modules.begin(), a.target_modules.end());
  const std::set<std::string> tb(b.target_modules.begin(), b.target_modules.end());
  return a.rank == b.rank && a.alpha == b.alpha && a.dropout == b.dropout && ta == tb;
}

lora_linear make_lora_linear(int64_t out_features, int64_t in_features, int rank,
                             at::Generator& generator, torch::Device device) {
  // kaiming_uniform_(a = sqrt(5)): gain sqrt(2 / (1 + a^2)) = sqrt(1/3), bound
  // sqrt(3) * gain / sqrt(fan_in) = 1 / sqrt(fan_in), fan_in being A's second dim.
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  torch::Tensor a = torch::empty({rank, in_features}, torch::kFloat32);
  a.uniform_(-bound, bound, generator);
  lora_linear out;
  out.a = a.to(device).requires_grad_(true);
  out.b = torch::zeros({out_features, rank}, torch::TensorOptions().device(device))
              .requires_grad_(true);
  return out;
}

torch::Tensor lora_linear_forward(const torch::Tensor& x, const torch::Tensor& weight,
                                  const lora_linear& adapter, double scale, double dropout,
                                  bool training) {
  const torch::Tensor base = torch::linear(x, weight);
  if (!adapter.defined()) return base;
  const torch::Tensor in = torch::dropout(x.to(torch::kFloat32), dropout, training);
  const torch::Tensor update = torch::linear(torch::linear(in, adapter.a), adapter.b) * scale;
  return base + update.to(base.scalar_type());
}

torch::Tensor lora_merged_weight(const torch::Tensor& weight, const lora_linear& adapter,
                                 double scale) {
  if (!adapter.defined()) return weight;
  const torch::Tensor delta = torch::matmul(adapter.b, adapter.a) * scale;
  return (weight.to(torch::kFloat32) + delta.to(weight.device())).to(weight.scalar_type());
}

}  // namespace sparserl
