// LoRA on qwen3_model: a fresh adapter changes nothing, switched-off adapters give the base,
// autograd reaches exactly the trainable tensors (adapters, or the base in full-weight mode),
// Adam through forward_hidden lowers a toy LM loss, and dropout acts only in training mode
// while autograd records.
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "model/generate.h"
#include "model/lora.h"
#include "model/qwen3.h"
#include "model/qwen3_init.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

std::string fixture_dir(const std::string& name) {
  return std::string(SPARSERL_SOURCE_DIR) + "/tests/model/fixtures/" + name;
}

torch::Tensor sample_ids(int64_t vocab) {
  return torch::remainder(torch::arange(14, torch::kInt64) * 37 + 5, vocab).view({2, 7});
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// Non-zero B (and new A) so the adapters change the outputs.
void randomize_lora(const qwen3_model& model, uint64_t seed, double std = 0.1) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  for (torch::Tensor p : model.lora_parameters()) p.copy_(torch::randn(p.sizes()) * std);
}

// Next-token cross-entropy of `ids` under the model (real autograd through forward_hidden).
torch::Tensor lm_loss(const qwen3_model& model, const torch::Tensor& ids) {
  const torch::Tensor logits = model.lm_logits(model.forward_hidden(ids));
  const int64_t t = ids.size(1);
  return torch::nn::functional::cross_entropy(
      logits.narrow(1, 0, t - 1).reshape({-1, logits.size(-1)}),
      ids.narrow(1, 1, t - 1).reshape({-1}));
}

qwen3_model fixture_model(const char* name = "qwen3_gqa", torch::Dtype dtype = torch::kFloat32) {
  return qwen3_model::load(fixture_dir(name), dtype);
}

TEST(lora, fresh_adapter_leaves_the_outputs_unchanged) {
  for (const char* name : {"qwen3_gqa", "qwen3_tied"}) {
    qwen3_model model = fixture_model(name);
    const torch::Tensor ids = sample_ids(model.config().vocab_size);
    const torch::Tensor base = model.forward(ids);
    model.attach_lora({}, 1);
    EXPECT_TRUE(model.has_lora());
    EXPECT_TRUE(torch::equal(model.forward(ids), base)) << name;  // B = 0 adds exactly 0
  }
}

TEST(lora, forward_is_the_lm_head_over_forward_hidden) {
  qwen3_model model = fixture_model();
  model.attach_lora({}, 1);
  randomize_lora(model, 2);
  const torch::Tensor ids = sample_ids(128);
  const torch::Tensor hidden = model.forward_hidden(ids);
  EXPECT_EQ(hidden.sizes(), (std::vector<int64_t>{2, 7, 64}));
  EXPECT_TRUE(torch::equal(model.lm_logits(hidden), model.forward(ids)));
}

TEST(lora, disabled_adapters_give_the_base_model) {
  qwen3_model model = fixture_model();
  const torch::Tensor ids = sample_ids(128);
  const torch::Tensor base = model.forward(ids);
  model.attach_lora({}, 1);
  randomize_lora(model, 2);
  EXPECT_GT(max_abs_diff(model.forward(ids), base), 1e-2);  // the adapters do act
  qwen3_forward_options off;
  off.adapters_enabled = false;
  EXPECT_TRUE(torch::equal(model.forward(ids, off), base));
  // The frozen reference builds no graph at all.
  EXPECT_FALSE(model.forward(ids, off).requires_grad());
  EXPECT_TRUE(model.forward(ids).requires_grad());
}

// The matrix-encoding projector trains through the prefix: gradients reach it with the base
// frozen and no adapters.
TEST(lora, gradients_flow_into_prefix_embeddings) {
  const qwen3_model model = fixture_model();
  const torch::Tensor prefix = torch::randn({2, 3, 64}).requires_grad_(true);
  qwen3_forward_options opts;
  opts.prefix_embeds = prefix;
  model.forward(sample_ids(128), opts).pow(2).mean().backward();
  ASSERT_TRUE(prefix.grad().defined());
  EXPECT_GT(prefix.grad().abs().sum().item<double>(), 0.0);
  for (const torch::Tensor& p : model.parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(lora, adapters_have_peft_shapes_init_and_freeze_the_base) {
  qwen3_model model = fixture_model();
  lora_config cfg;
  cfg.rank = 4;
  model.attach_lora(cfg, 3);
  ASSERT_NE(model.lora(), nullptr);
  EXPECT_EQ(model.lora()->rank, 4);
  EXPECT_DOUBLE_EQ(model.lora()->scale(), 4.0);
  const std::vector<torch::Tensor> params = model.lora_parameters();
  ASSERT_EQ(params.size(), 2u * 7 * 2);  // A and B, 7 modules, 2 layers
  for (const torch::Tensor& p : params) {
    EXPECT_EQ(p.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(p.requires_grad());
  }
  for (const torch::Tensor& p : model.parameters()) EXPECT_FALSE(p.requires_grad());
  const qwen3_layer_lora& layer = model.lora_layers()[1];
  EXPECT_EQ(layer.k_proj.a.sizes(), (std::vector<int64_t>{4, 64}));  // [r, in]
  EXPECT_EQ(layer.k_proj.b.sizes(), (std::vector<int64_t>{32, 4}));  // [out, r]
  EXPECT_EQ(layer.down_proj.a.sizes(), (std::vector<int64_t>{4, 96}));
  EXPECT_EQ(layer.down_proj.b.sizes(), (std::vector<int64_t>{64, 4}));
  EXPECT_EQ(layer.down_proj.b.count_nonzero().item<int64_t>(), 0);
  // kaiming_uniform(a = sqrt(5)): U(-1/sqrt(in), 1/sqrt(in)), std bound / sqrt(3).
  const torch::Tensor a = layer.down_proj.a;
  const double bound = 1.0 / std::sqrt(96.0);
  EXPECT_LE(a.abs().max().item<double>(), bound);
  EXPECT_NEAR(a.std().item<double>(), bound / std::sqrt(3.0), 0.15 * bound);
}

TEST(lora, init_is_seeded_and_independent_of_the_target_order) {
  lora_config forward_order, reverse_order;
  forward_order.target_modules = {"q_proj", "v_proj", "down_proj"};
  reverse_order.target_modules = {"down_proj", "v_proj", "q_proj"};
  qwen3_model a = fixture_model(), b = fixture_model(), c = fixture_model();
  a.attach_lora(forward_order, 7);
  b.attach_lora(reverse_order, 7);
  c.attach_lora(forward_order, 8);
  const auto pa = a.lora_parameters(), pb = b.lora_parameters(), pc = c.lora_parameters();
  ASSERT_EQ(pa.size(), 2u * 3 * 2);
  ASSERT_EQ(pb.size(), pa.size());
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], pb[i])) << i;
  EXPECT_FALSE(torch::equal(pa[0], pc[0]));
  // Untargeted modules have no adapter.
  EXPECT_FALSE(a.lora_layers()[0].k_proj.defined());
  EXPECT_TRUE(a.lora_layers()[0].v_proj.defined());
}

TEST(lora, bad_configs_throw) {
  const auto attach_error = [](const lora_config& cfg) -> std::string {
    qwen3_model model = fixture_model();
    try {
      model.attach_lora(cfg, 0);
    } catch (const error& e) {
      EXPECT_FALSE(model.has_lora());
      return e.what();
    }
    return "";
  };
  lora_config c;
  c.rank = 0;
  EXPECT_NE(attach_error(c).find("rank"), std::string::npos);
  c = {};
  c.alpha = 0;
  EXPECT_NE(attach_error(c).find("alpha"), std::string::npos);
  c = {};
  c.dropout = 1.0;
  EXPECT_NE(attach_error(c).find("dropout"), std::string::npos);
  c = {};
  c.target_modules = {};
  EXPECT_NE(attach_error(c).find("empty"), std::string::npos);
  c.target_modules = {"q_proj", "q_proj"};
  EXPECT_NE(attach_error(c).find("twice"), std::string::npos);
  c.target_modules = {"q_proj", "lm_head"};
  EXPECT_NE(attach_error(c).find("'lm_head'"), std::string::npos);
  qwen3_model model = fixture_model();
  model.attach_lora({}, 0);
  EXPECT_THROW(model.attach_lora({}, 0), error);
}

TEST(lora, backward_reaches_only_the_adapters) {
  qwen3_model model = fixture_model();
  model.attach_lora({}, 1);
  randomize_lora(model, 2);
  lm_loss(model, sample_ids(128)).backward();
  for (const torch::Tensor& p : model.parameters()) EXPECT_FALSE(p.grad().defined());
  for (const torch::Tensor& p : model.lora_parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_GT(p.grad().abs().sum().item<double>(), 0.0);
  }
}

TEST(lora, full_weight_mode_gives_every_base_weight_a_gradient) {
  for (const char* name : {"qwen3_gqa", "qwen3_tied"}) {
    qwen3_model model = fixture_model(name);
    const bool tied = model.config().tie_word_embeddings;
    const std::vector<torch::Tensor> params = model.parameters();
    const size_t per_layer = 11, layers = model.weights().layers.size();
    EXPECT_EQ(params.size(), 1 + per_layer * layers + 1 + (tied ? 0 : 1)) << name;
    std::set<const void*> distinct;
    for (const torch::Tensor& p : params) distinct.insert(p.data_ptr());
    EXPECT_EQ(distinct.size(), params.size()) << name;  // each tensor once
    model.set_base_trainable(true);
    lm_loss(model, sample_ids(model.config().vocab_size)).backward();
    for (const torch::Tensor& p : params) {
      ASSERT_TRUE(p.grad().defined()) << name;
      EXPECT_GT(p.grad().abs().sum().item<double>(), 0.0) << name;
    }
    model.set_base_trainable(false);
    for (const torch::Tensor& p : params) EXPECT_FALSE(p.requires_grad());
  }
}

// A repeating sequence the tiny model can learn in a few steps.
torch::Tensor toy_sequence(int64_t vocab) {
  return torch::remainder(torch::arange(32, torch::kInt64) * 5 + 3, vocab).view({2, 16});
}

double train(qwen3_model& model, std::vector<torch::Tensor> params, int steps, double lr,
             double* first_loss) {
  torch::optim::Adam adam(params, torch::optim::AdamOptions(lr));
  const torch::Tensor ids = toy_sequence(model.config().vocab_size);
  double loss_value = 0;
  for (int step = 0; step < steps; ++step) {
    adam.zero_grad();
    const torch::Tensor loss = lm_loss(model, ids);
    loss.backward();
    adam.step();
    loss_value = loss.item<double>();
    if (step == 0) *first_loss = loss_value;
  }
  torch::NoGradGuard no_grad;
  return lm_loss(model, ids).item<double>();
}

TEST(lora, adam_steps_lower_a_toy_lm_loss) {
  const qwen3_config cfg = tiny_qwen3_config(64);
  {
    qwen3_model model(cfg, random_qwen3_weights(cfg, 11));
    model.set_base_trainable(true);
    double first = 0;
    const double last = train(model, model.parameters(), 12, 1e-2, &first);
    std::printf("full-weight loss %.3f -> %.3f\n", first, last);
    EXPECT_NEAR(first, std::log(64.0), 0.2);  // near-uniform predictions at init
    EXPECT_LT(last, first - 1.0);
  }
  {
    qwen3_model model(cfg, random_qwen3_weights(cfg, 11));
    lora_config lc;
    lc.dropout = 0.0;
    model.attach_lora(lc, 12);
    model.set_training(true);
    const std::vector<torch::Tensor> before = model.parameters();
    std::vector<torch::Tensor> base_copy;
    for (const torch::Tensor& p : before) base_copy.push_back(p.clone());
    double first = 0;
    const double last = train(model, model.lora_parameters(), 12, 1e-2, &first);
    std::printf("LoRA loss %.3f -> %.3f\n", first, last);
    EXPECT_LT(last, first - 0.3);
    for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], base_copy[i]));
  }
}

TEST(lora, dropout_acts_only_in_training_mode) {
  qwen3_model model = fixture_model();
  const torch::Tensor ids = sample_ids(128);
  const torch::Tensor base = model.forward(ids);
  lora_config cfg;
  cfg.dropout = 0.5;
  model.attach_lora(cfg, 1);
  randomize_lora(model, 2);
  EXPECT_FALSE(model.training());
  const torch::Tensor eval = model.forward(ids);
  EXPECT_TRUE(torch::equal(model.forward(ids), eval));
  model.set_training(true);
  const torch::Tensor t1 = model.forward(ids), t2 = model.forward(ids);
  EXPECT_GT(max_abs_diff(t1, t2), 1e-3);
  EXPECT_GT(max_abs_diff(t1, eval), 1e-3);
  // Dropout sits on the adapter path only: the base is untouched in training mode too.
  qwen3_forward_options off;
  off.adapters_enabled = false;
  EXPECT_TRUE(torch::equal(model.forward(ids, off), base));
  // Nothing drops out without autograd (generation, no-grad scoring), even in training mode.
  {
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(torch::equal(model.forward(ids), eval));
    generate_options greedy;
    greedy.max_new_tokens = 6;
    greedy.sampling.temperature = 0.0;
    const std::vector<generation> trained = generate(model, {{5, 9, 2}}, greedy);
    model.set_training(false);
    EXPECT_EQ(trained[0].ids, generate(model, {{5, 9, 2}}, greedy)[0].ids);
  }
  EXPECT_FALSE(model.training());
  EXPECT_TRUE(torch::equal(model.forward(ids), eval));
}

TEST(lora, kv_cache_decode_matches_full_forward_with_adapters) {
  qwen3_model model = fixture_model();
  model.attach_lora({}, 1);
  randomize_lora(model, 2);
  torch::NoGradGuard no_grad;
  const torch::Tensor ids = sample_ids(128);
  const torch::Tensor full = model.forward(ids);
  qwen3_kv_cache cache;
  qwen3_forward_options opts;
  opts.cache = &cache;
  std::vector<torch::Tensor> parts{model.forward(ids.narrow(1, 0, 4), opts)};
  for (int64_t i = 4; i < ids.size(1); ++i)
    parts.push_back(model.forward(ids.narrow(1, i, 1), opts));
  EXPECT_LE(max_abs_diff(torch::cat(parts, 1), full), 1e-4);
}

TEST(lora, bf16_base_keeps_fp32_adapters) {
  qwen3_model half = fixture_model("qwen3_gqa", torch::kBFloat16);
  qwen3_model full = fixture_model("qwen3_gqa", torch::kFloat32);
  half.attach_lora({}, 1);
  full.attach_lora({}, 1);
  randomize_lora(half, 2, 0.05);
  randomize_lora(full, 2, 0.05);
  const torch::Tensor ids = sample_ids(128);
  const torch::Tensor hidden = half.forward_hidden(ids);
  EXPECT_EQ(hidden.scalar_type(), torch::kBFloat16);
  const torch::Tensor logits = half.lm_logits(hidden);
  EXPECT_EQ(logits.scalar_type(), torch::kFloat32);
  const torch::Tensor want = full.forward(ids);
  const double rel = max_abs_diff(logits, want) / want.abs().max().item<double>();
  std::printf("bf16 base + fp32 LoRA vs fp32: max relative logit error %.3g\n", rel);
  EXPECT_LE(rel, 0.05);
  logits.pow(2).mean().backward();
  for (const torch::Tensor& p : half.lora_parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().scalar_type(), torch::kFloat32);
  }
}

}  // namespace
}  // namespace sparserl
