// random_qwen3_weights: deterministic per seed, different across seeds, transformers' init
// statistics (normal(0, 0.02) linears and embeddings, unit norms), tying, dtype and device; and
// tiny_qwen3_config makes a model that runs.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <vector>

#include "model/qwen3.h"
#include "model/qwen3_init.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

std::vector<torch::Tensor> all_tensors(const qwen3_config& cfg, const qwen3_weights& w) {
  return qwen3_model(cfg, w).parameters();
}

TEST(qwen3_init, same_seed_same_weights_other_seed_other_weights) {
  const qwen3_config cfg = tiny_qwen3_config();
  const auto a = all_tensors(cfg, random_qwen3_weights(cfg, 1));
  const auto b = all_tensors(cfg, random_qwen3_weights(cfg, 1));
  const auto c = all_tensors(cfg, random_qwen3_weights(cfg, 2));
  ASSERT_EQ(a.size(), b.size());
  size_t differing = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
    if (!torch::equal(a[i], c[i])) ++differing;
  }
  // Everything but the norm scales (ones whatever the seed) differs.
  const size_t norms = 4 * static_cast<size_t>(cfg.num_hidden_layers) + 1;
  EXPECT_EQ(differing, a.size() - norms);
  // The global generator plays no part.
  torch::manual_seed(123);
  const auto d = all_tensors(cfg, random_qwen3_weights(cfg, 1));
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], d[i])) << i;
}

TEST(qwen3_init, statistics_follow_transformers_init) {
  qwen3_config cfg = tiny_qwen3_config(512);
  const qwen3_weights w = random_qwen3_weights(cfg, 3);
  for (const torch::Tensor& t :
       {w.embed_tokens, w.lm_head, w.layers[0].q_proj, w.layers[1].down_proj}) {
    EXPECT_NEAR(t.mean().item<double>(), 0.0, 2e-3);
    EXPECT_NEAR(t.std().item<double>(), 0.02, 1e-3);
  }
  for (const torch::Tensor& t : {w.norm, w.layers[0].input_layernorm, w.layers[1].q_norm,
                                 w.layers[1].k_norm, w.layers[0].post_attention_layernorm})
    EXPECT_TRUE(torch::equal(t, torch::ones_like(t)));
  const qwen3_weights wide = random_qwen3_weights(cfg, 3, torch::kFloat32, torch::kCPU, 0.1);
  EXPECT_NEAR(wide.embed_tokens.std().item<double>(), 0.1, 5e-3);
  EXPECT_THROW(random_qwen3_weights(cfg, 3, torch::kFloat32, torch::kCPU, 0.0), error);
}

TEST(qwen3_init, tied_dtype_and_a_working_model) {
  qwen3_config cfg = tiny_qwen3_config();
  cfg.tie_word_embeddings = true;
  const qwen3_weights w = random_qwen3_weights(cfg, 4, torch::kBFloat16);
  EXPECT_TRUE(w.lm_head.is_same(w.embed_tokens));
  EXPECT_EQ(w.layers[1].up_proj.scalar_type(), torch::kBFloat16);
  // bf16 weights are the fp32 draws rounded: the same seed in fp32 rounds to them.
  const qwen3_weights f = random_qwen3_weights(cfg, 4);
  EXPECT_TRUE(torch::equal(f.layers[1].up_proj.to(torch::kBFloat16), w.layers[1].up_proj));
  const qwen3_model model(cfg, w);
  EXPECT_EQ(model.parameters().size(), 1 + 11 * 2 + 1u);
  const torch::Tensor logits = model.forward(torch::arange(10, torch::kInt64).view({2, 5}));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 5, 128}));
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
}

TEST(qwen3_init, tiny_config_is_a_valid_gqa_shape) {
  const qwen3_config cfg = tiny_qwen3_config(1000);
  EXPECT_EQ(cfg.vocab_size, 1000);
  EXPECT_LT(cfg.num_key_value_heads, cfg.num_attention_heads);
  EXPECT_NO_THROW(validate(cfg, "tiny"));
  EXPECT_THROW(tiny_qwen3_config(0), error);
}

}  // namespace
}  // namespace sparserl
