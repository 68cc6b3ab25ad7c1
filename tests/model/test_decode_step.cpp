// The decode modes of generate() (model/decode_step.h): the fixed-shape step (the one CUDA graphs
// capture) must give the growing cache's tokens and, step by step, its logits, with left padding,
// a prefix, sampling and finished sequences in the batch; the CUDA-graph mode must match both on a
// GPU (skipped without one) and refuse clearly where it cannot run.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <limits>
#include <string>
#include <vector>

#include "model/decode_step.h"
#include "model/generate.h"
#include "model/qwen3.h"
#include "model/qwen3_init.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

using ids_t = std::vector<int32_t>;
const std::vector<ids_t> prompts = {{5, 17, 3, 90, 42, 7, 64}, {11, 2}, {80, 8, 33, 1}};

// Wider initial weights than 0.02 so the logits have clear maxima (greedy is then stable
// against the last-bit differences two attention layouts may give).
qwen3_model random_model(torch::Device device = torch::kCPU) {
  const qwen3_config cfg = tiny_qwen3_config(97);
  return qwen3_model(cfg, random_qwen3_weights(cfg, 11, torch::kFloat32, device, 0.2));
}

std::vector<ids_t> run(const qwen3_model& m, decode_mode mode, generate_options o) {
  o.mode = mode;
  std::vector<ids_t> out;
  for (const generation& g : generate(m, prompts, o)) out.push_back(g.ids);
  return out;
}

generate_options greedy(int64_t tokens) {
  generate_options o;
  o.max_new_tokens = tokens;
  o.sampling.temperature = 0;
  return o;
}

// Leaves NaN in memory the allocator hands out next (freed blocks of the KV stores' size), so a
// fixed-shape step that read a never-written slot would turn its logits into NaN.
void poison_free_memory(const qwen3_model& m, int64_t batch, int64_t capacity) {
  const qwen3_config& c = m.config();
  const auto opts = m.weights().embed_tokens.options();
  std::vector<torch::Tensor> blocks;
  for (int64_t i = 0; i < 4 * c.num_hidden_layers; ++i)
    blocks.push_back(torch::full({batch, c.num_key_value_heads, capacity, c.head_dim},
                                 std::numeric_limits<float>::quiet_NaN(), opts));
}

TEST(decode_step, fixed_mode_gives_the_growing_modes_greedy_tokens) {
  const qwen3_model m = random_model();
  const std::vector<ids_t> growing = run(m, decode_mode::growing, greedy(20));
  poison_free_memory(m, 3, 7 + 20);
  EXPECT_EQ(run(m, decode_mode::fixed, greedy(20)), growing);
  for (const ids_t& ids : growing) EXPECT_EQ(ids.size(), 20u);
}

TEST(decode_step, fixed_mode_matches_with_a_prefix_sampling_and_eos) {
  const qwen3_model m = random_model();
  generate_options o;
  o.max_new_tokens = 24;
  o.sampling = {0.9, 20, 0.95, 1234};
  o.prefix_embeds = torch::randn({3, 4, m.config().hidden_size}, torch::kFloat32);
  const std::vector<ids_t> growing = run(m, decode_mode::growing, o);
  o.eos_token_ids = {growing[1].at(5)};  // ends one sequence early; the others go on
  const std::vector<ids_t> a = run(m, decode_mode::growing, o);
  const std::vector<ids_t> b = run(m, decode_mode::fixed, o);
  EXPECT_EQ(a, b);
  EXPECT_LE(a[1].size(), 6u);
}

TEST(decode_step, fixed_steps_give_the_growing_steps_logits) {
  torch::NoGradGuard no_grad;
  const qwen3_model m = random_model();
  const torch::Tensor ids = torch::randint(1, 97, {2, 6}, torch::kInt64);
  torch::Tensor mask = torch::ones({2, 6}, torch::kInt64);
  mask[1].narrow(0, 0, 2).fill_(0);  // the second row is left-padded by 2
  qwen3_kv_cache a, b;
  a.reserve(14);
  b.reserve(14);
  qwen3_forward_options fw;
  fw.attention_mask = mask;
  fw.cache = &a;
  m.forward(ids, fw);
  fw.cache = &b;
  m.forward(ids, fw);
  const auto growing = make_decode_stepper(decode_mode::growing, m, a, mask);
  const auto fixed = make_decode_stepper(decode_mode::fixed, m, b, mask);
  for (int step = 0; step < 8; ++step) {
    const torch::Tensor token = torch::randint(1, 97, {2}, torch::kInt64);
    const torch::Tensor x = growing->step(token), y = fixed->step(token);
    EXPECT_TRUE(torch::allclose(x, y, 1e-5, 1e-5)) << "step " << step;
  }
  EXPECT_EQ(b.slot.item<int64_t>(), 14);  // the fixed cache wrote every reserved slot
}

TEST(decode_step, modes_parse_and_refuse_clearly) {
  EXPECT_EQ(parse_decode_mode("cuda_graph"), decode_mode::cuda_graph);
  EXPECT_EQ(to_string(parse_decode_mode("fixed")), "fixed");
  EXPECT_THROW(parse_decode_mode("fast"), error);
  EXPECT_EQ(resolve_decode_mode(decode_mode::automatic, torch::kCPU), decode_mode::growing);
  const qwen3_model m = random_model();
  try {
    run(m, decode_mode::cuda_graph, greedy(4));
    FAIL() << "a CPU model decoded with CUDA graphs";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda_graph"), std::string::npos) << e.what();
  }
  // Without a prefilled, reserved cache the fixed mode cannot start.
  qwen3_kv_cache empty;
  EXPECT_THROW(make_decode_stepper(decode_mode::fixed, m, empty, torch::ones({1, 3})), error);
}

TEST(decode_step_gpu, cuda_graph_mode_gives_the_eager_tokens) {
  if (!torch::cuda::is_available() || !cuda_graphs_built())
    GTEST_SKIP() << "needs a CUDA device and a CUDA build of LibTorch";
  const qwen3_model m = random_model(torch::kCUDA);
  EXPECT_EQ(resolve_decode_mode(decode_mode::automatic, torch::kCUDA), decode_mode::cuda_graph);
  const std::vector<ids_t> growing = run(m, decode_mode::growing, greedy(32));
  poison_free_memory(m, 3, 7 + 32);
  EXPECT_EQ(run(m, decode_mode::cuda_graph, greedy(32)), growing);
  EXPECT_EQ(run(m, decode_mode::fixed, greedy(32)), growing);
  generate_options o;
  o.max_new_tokens = 24;
  o.sampling = {0.9, 20, 0.95, 77};
  o.eos_token_ids = {growing[0].at(3)};
  EXPECT_EQ(run(m, decode_mode::cuda_graph, o), run(m, decode_mode::growing, o));
}

// bf16, as rollouts run: sampling validates the probabilities (a NaN logit fails the multinomial)
// and greedy decoding must stay finite and equal to the eager tokens for the first steps.
TEST(decode_step_gpu, cuda_graph_mode_in_bf16_samples_from_finite_logits) {
  if (!torch::cuda::is_available() || !cuda_graphs_built())
    GTEST_SKIP() << "needs a CUDA device and a CUDA build of LibTorch";
  const qwen3_config cfg = tiny_qwen3_config(97);
  const qwen3_model m(cfg, random_qwen3_weights(cfg, 11, torch::kBFloat16, torch::kCUDA, 0.2));
  generate_options o;
  o.max_new_tokens = 40;
  o.sampling = {1.0, 0, 0.95, 5};
  poison_free_memory(m, 3, 7 + 40);
  const std::vector<ids_t> sampled = run(m, decode_mode::cuda_graph, o);
  for (const ids_t& ids : sampled) EXPECT_EQ(ids.size(), 40u);
  const std::vector<ids_t> growing = run(m, decode_mode::growing, greedy(8));
  poison_free_memory(m, 3, 7 + 8);
  EXPECT_EQ(run(m, decode_mode::cuda_graph, greedy(8)), growing);
}

}  // namespace
}  // namespace sparserl
