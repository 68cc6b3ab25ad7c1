#include "model/value_head.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>

#include "model/safetensors.h"
#include "model/torch_safetensors.h"
#include "sparse/error.h"

namespace sparserl {

value_head::value_head(int64_t hidden_size, uint64_t seed, torch::Device device) {
  if (hidden_size <= 0)
    throw error("value_head: hidden_size " + std::to_string(hidden_size) + " must be positive");
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  torch::Tensor w = torch::empty({1, hidden_size}, torch::kFloat32);
  torch::Tensor b = torch::empty({1}, torch::kFloat32);
  w.uniform_(-bound, bound, gen);
  b.uniform_(-bound, bound, gen);
  weight_ = w.to(device).requires_grad_(true);
  bias_ = b.to(device).requires_grad_(true);
}

torch::Tensor value_head::forward(const torch::Tensor& hidden) const {
  if (hidden.dim() != 3 || hidden.size(2) != hidden_size())
    throw error("value_head::forward: hidden must be [batch, t, " + std::to_string(hidden_size()) +
                "], got " + shape_text(hidden.sizes()));
  const torch::Tensor x = hidden.to(weight_.device(), torch::kFloat32);
  return torch::linear(x, weight_, bias_).squeeze(-1);
}

void value_head::save(const std::string& path) const {
  write_torch_safetensors(path, {{weight_name, weight_}, {bias_name, bias_}});
}

void value_head::load(const std::string& path) {
  const safetensors_file file(path);
  for (const std::string& name : file.names())
    if (name != weight_name && name != bias_name)
      throw error("value head " + path + ": unexpected tensor " + name + " (expected only " +
                  weight_name + " and " + bias_name + ")");
  torch::NoGradGuard no_grad;
  for (torch::Tensor* target : {&weight_, &bias_}) {
    const std::string name = target == &weight_ ? weight_name : bias_name;
    const std::string where = "value head " + path + ": tensor " + name;
    if (!file.contains(name)) throw error(where + " is missing");
    const tensor_view& view = file.get(name);
    if (view.shape != target->sizes().vec())
      throw error(where + " has shape " + shape_text(view.shape) + ", expected " +
                  shape_text(target->sizes()));
    target->copy_(read_float_tensor(view, where, torch::kFloat32, target->device()));
  }
}

}  // namespace sparserl
