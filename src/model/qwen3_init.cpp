#include "model/qwen3_init.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "sparse/error.h"

namespace sparserl {

namespace {

torch::Tensor normal_tensor(const std::vector<int64_t>& shape, double std, at::Generator& gen,
                            torch::Dtype dtype, torch::Device device) {
  torch::Tensor t = torch::empty(shape, torch::kFloat32);
  t.normal_(0.0, std, gen);
  return t.to(device, dtype);
}

torch::Tensor ones_tensor(const std::vector<int64_t>& shape, torch::Dtype dtype,
                          torch::Device device) {
  return torch::ones(shape, torch::TensorOptions().dtype(dtype).device(device));
}

}  // namespace

qwen3_weights random_qwen3_weights(const qwen3_config& cfg, uint64_t seed, torch::Dtype dtype,
                                   torch::Device device, double initializer_range) {
  validate(cfg, "random_qwen3_weights");
  if (!(initializer_range > 0))
    throw error("random_qwen3_weights: initializer_range " + std::to_string(initializer_range) +
                " must be positive");
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t v = cfg.vocab_size, h = cfg.hidden_size;
  qwen3_weights w;
  w.embed_tokens = normal_tensor({v, h}, initializer_range, gen, dtype, device);
  w.layers.resize(static_cast<size_t>(cfg.num_hidden_layers));
  const std::vector<qwen3_layer_tensor> table = qwen3_layer_tensors(cfg);
  for (qwen3_layer_weights& layer : w.layers)
    for (const qwen3_layer_tensor& t : table)
      layer.*t.member = t.shape.size() == 1  // the RMSNorm scales
                            ? ones_tensor(t.shape, dtype, device)
                            : normal_tensor(t.shape, initializer_range, gen, dtype, device);
  w.norm = ones_tensor({h}, dtype, device);
  w.lm_head = cfg.tie_word_embeddings
                  ? w.embed_tokens
                  : normal_tensor({v, h}, initializer_range, gen, dtype, device);
  return w;
}

qwen3_config tiny_qwen3_config(int64_t vocab_size) {
  qwen3_config c;
  c.vocab_size = vocab_size;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.max_position_embeddings = 2048;
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 10000.0;
  c.torch_dtype = "float32";
  validate(c, "tiny_qwen3_config");
  return c;
}

}  // namespace sparserl
