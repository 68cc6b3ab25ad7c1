#pragma once
// Fresh Qwen3 weights for pre-training from scratch and for tests: what transformers'
// Qwen3PreTrainedModel._init_weights does (linears and embeddings normal(0, initializer_range),
// RMSNorm scales ones), drawn from a CPU generator seeded once, so a seed gives the same weights
// on every run and every device.
#include <torch/types.h>

#include <cstdint>

#include "model/hf_config.h"
#include "model/qwen3.h"

namespace sparserl {

// The draws go embed_tokens, then each layer's linears in checkpoint order, then lm_head (when
// not tied; a tied lm_head is the embedding tensor itself). initializer_range is 0.02 in every
// Qwen3 config (and what hf_config's to_json writes).
qwen3_weights random_qwen3_weights(const qwen3_config& cfg, uint64_t seed,
                                   torch::Dtype dtype = torch::kFloat32,
                                   torch::Device device = torch::kCPU,
                                   double initializer_range = 0.02);

// A small but complete Qwen3 shape (GQA: 4 query heads over 2 kv heads, head_dim 16, 2 layers,
// hidden 64, untied lm_head) for tests and quick starts; vocab_size to match a tokenizer.
qwen3_config tiny_qwen3_config(int64_t vocab_size = 128);

}  // namespace sparserl
