// Batched generation and sampling on the tiny random Qwen3 checkpoints: the cached, left-padded
// batch must reproduce single-prompt generation and a cache-free reference loop, seeds must
// reproduce draws, and the top-k / top-p filters must never let a filtered token through.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/generate.h"
#include "model/qwen3.h"
#include "model/sampling.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

using ids_t = std::vector<int32_t>;

std::string fixture_dir(const std::string& name) {
  return std::string(SPARSERL_SOURCE_DIR) + "/tests/model/fixtures/" + name;
}

const std::vector<ids_t> prompts = {{5, 17, 3, 99, 42, 7, 64}, {11, 2}, {120, 8, 33, 1}};

generate_options greedy(int64_t max_new_tokens) {
  generate_options o;
  o.max_new_tokens = max_new_tokens;
  o.sampling.temperature = 0.0;
  return o;
}

std::vector<ids_t> ids_of(const std::vector<generation>& gens) {
  std::vector<ids_t> out;
  for (const generation& g : gens) out.push_back(g.ids);
  return out;
}

// Greedy decoding the slow way: the whole sequence through forward() each step, no cache, no
// padding, one prompt at a time.
ids_t naive_greedy(const qwen3_model& model, const ids_t& prompt, int64_t steps,
                   const torch::Tensor& prefix = {}) {
  std::vector<int64_t> seq(prompt.begin(), prompt.end());
  ids_t out;
  for (int64_t s = 0; s < steps; ++s) {
    qwen3_forward_options fw;
    fw.prefix_embeds = prefix;
    const torch::Tensor ids = torch::tensor(seq, torch::kInt64).unsqueeze(0);
    const int64_t next = model.forward(ids, fw)[0][-1].argmax().item<int64_t>();
    seq.push_back(next);
    out.push_back(static_cast<int32_t>(next));
  }
  return out;
}

// Maps ids to letters so stop strings have a deterministic text to match.
std::string letters(const ids_t& ids) {
  std::string s;
  for (int32_t id : ids) s.push_back(static_cast<char>('a' + id % 26));
  return s;
}

class generate_test : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    model_ = std::make_unique<qwen3_model>(qwen3_model::load(fixture_dir(GetParam())));
  }
  const qwen3_model& model() const { return *model_; }

 private:
  std::unique_ptr<qwen3_model> model_;
};

TEST_P(generate_test, greedy_batch_matches_single_prompts_and_uncached_loop) {
  constexpr int64_t steps = 8;
  const std::vector<generation> batch = generate(model(), prompts, greedy(steps));
  ASSERT_EQ(batch.size(), prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::vector<generation> alone = generate(model(), {prompts[i]}, greedy(steps));
    EXPECT_EQ(batch[i].ids, alone[0].ids) << "prompt " << i;
    EXPECT_EQ(batch[i].ids, naive_greedy(model(), prompts[i], steps)) << "prompt " << i;
    EXPECT_EQ(batch[i].finish_reason, "length");
  }
}

TEST_P(generate_test, prefix_embeddings_follow_the_padding) {
  constexpr int64_t steps = 6;
  torch::manual_seed(3);
  const torch::Tensor prefix =
      torch::randn({static_cast<int64_t>(prompts.size()), 3, model().config().hidden_size});
  generate_options o = greedy(steps);
  o.prefix_embeds = prefix;
  const std::vector<generation> batch = generate(model(), prompts, o);
  for (size_t i = 0; i < prompts.size(); ++i) {
    const torch::Tensor own = prefix.narrow(0, static_cast<int64_t>(i), 1);
    EXPECT_EQ(batch[i].ids, naive_greedy(model(), prompts[i], steps, own)) << "prompt " << i;
  }
  // The prefix changes what the model says (else this test would not see a misplaced prefix).
  EXPECT_NE(ids_of(batch), ids_of(generate(model(), prompts, greedy(steps))));
}

TEST_P(generate_test, seed_reproduces_samples) {
  generate_options o;
  o.max_new_tokens = 12;
  o.sampling.temperature = 1.0;
  o.sampling.seed = 1234;
  const auto first = ids_of(generate(model(), prompts, o));
  EXPECT_EQ(first, ids_of(generate(model(), prompts, o)));
  o.sampling.seed = 99;
  EXPECT_NE(first, ids_of(generate(model(), prompts, o)));
}

TEST_P(generate_test, top_k_one_and_tiny_top_p_are_greedy) {
  const auto expected = ids_of(generate(model(), prompts, greedy(8)));
  generate_options o;
  o.max_new_tokens = 8;
  o.sampling.temperature = 1.0;
  o.sampling.seed = 7;
  o.sampling.top_k = 1;
  EXPECT_EQ(ids_of(generate(model(), prompts, o)), expected);
  o.sampling.top_k = 0;
  o.sampling.top_p = 1e-6;
  EXPECT_EQ(ids_of(generate(model(), prompts, o)), expected);
}

// What a sequence should produce with `eos`: the greedy tokens up to and including its first
// occurrence, else all of them.
generation cut_at(const ids_t& full, int32_t eos) {
  generation g{full, "length", ""};
  for (size_t j = 0; j < full.size(); ++j)
    if (full[j] == eos) return {ids_t(full.begin(), full.begin() + j + 1), "eos", ""};
  return g;
}

TEST_P(generate_test, eos_stops_each_sequence_where_it_appears) {
  constexpr int64_t steps = 8;
  const auto full = ids_of(generate(model(), prompts, greedy(steps)));
  generate_options o = greedy(steps);
  const int32_t eos = full[0][3];
  o.eos_token_ids = {eos};
  const std::vector<generation> got = generate(model(), prompts, o);
  ASSERT_EQ(got[0].finish_reason, "eos");
  EXPECT_LE(got[0].ids.size(), 4u);
  EXPECT_EQ(got[0].ids.back(), eos);
  for (size_t i = 0; i < prompts.size(); ++i) {
    const generation want = cut_at(full[i], eos);
    EXPECT_EQ(got[i].ids, want.ids) << "prompt " << i;
    EXPECT_EQ(got[i].finish_reason, want.finish_reason) << "prompt " << i;
  }
}

TEST_P(generate_test, stop_string_ends_sequence_on_decoded_text) {
  constexpr int64_t steps = 8;
  generate_options o = greedy(steps);
  o.decode = letters;
  const std::vector<generation> full = generate(model(), prompts, o);
  ASSERT_EQ(full[1].text, letters(full[1].ids));
  const std::string stop = full[1].text.substr(2, 2);
  o.stop_strings = {stop};
  const std::vector<generation> got = generate(model(), prompts, o);
  for (size_t i = 0; i < prompts.size(); ++i) {
    // The first prefix of the full output whose text contains the stop string.
    size_t end = 1;
    while (end <= full[i].ids.size() &&
           letters(ids_t(full[i].ids.begin(), full[i].ids.begin() + end)).find(stop) ==
               std::string::npos)
      ++end;
    const bool stops = end <= full[i].ids.size();
    const ids_t want(full[i].ids.begin(), full[i].ids.begin() + (stops ? end : full[i].ids.size()));
    EXPECT_EQ(got[i].ids, want) << "prompt " << i;
    EXPECT_EQ(got[i].finish_reason, stops ? "stop" : "length") << "prompt " << i;
    EXPECT_EQ(got[i].text, letters(got[i].ids));
  }
  EXPECT_EQ(got[1].finish_reason, "stop");
  EXPECT_LE(got[1].ids.size(), 4u);
}

TEST_P(generate_test, length_limit_and_zero_tokens) {
  const std::vector<generation> got = generate(model(), prompts, greedy(5));
  for (const generation& g : got) {
    EXPECT_EQ(g.ids.size(), 5u);
    EXPECT_EQ(g.finish_reason, "length");
  }
  for (const generation& g : generate(model(), prompts, greedy(0))) {
    EXPECT_TRUE(g.ids.empty());
    EXPECT_EQ(g.finish_reason, "length");
  }
}

TEST_P(generate_test, bad_inputs_throw) {
  EXPECT_THROW(generate(model(), {}, greedy(2)), error);
  EXPECT_THROW(generate(model(), {{1, 2}, {}}, greedy(2)), error);
  EXPECT_THROW(generate(model(), {{1, 2}, {1000000}}, greedy(2)), error);
  generate_options o = greedy(2);
  o.stop_strings = {"x"};
  EXPECT_THROW(generate(model(), prompts, o), error);
  o = greedy(2);
  o.sampling.top_p = 0.0;
  EXPECT_THROW(generate(model(), prompts, o), error);
  o = greedy(2);
  o.prefix_embeds = torch::zeros({1, 2, model().config().hidden_size});
  EXPECT_THROW(generate(model(), prompts, o), error);
}

INSTANTIATE_TEST_SUITE_P(fixtures, generate_test, ::testing::Values("qwen3_gqa", "qwen3_tied"));

// Logits of the probabilities [0.5, 0.3, 0.15, 0.05], in a shuffled vocabulary order.
torch::Tensor hand_made_logits() {
  return torch::tensor({0.15, 0.5, 0.05, 0.3}, torch::kFloat32).log().unsqueeze(0);
}

std::vector<bool> kept(const torch::Tensor& filtered) {
  std::vector<bool> out;
  for (int64_t j = 0; j < filtered.size(1); ++j)
    out.push_back(std::isfinite(filtered[0][j].item<float>()));
  return out;
}

TEST(sampling_filters, top_p_keeps_smallest_set_reaching_the_mass) {
  const torch::Tensor logits = hand_made_logits();
  EXPECT_EQ(kept(filter_logits(logits, 0, 0.7)), (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(kept(filter_logits(logits, 0, 0.9)), (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(kept(filter_logits(logits, 0, 1e-9)), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(kept(filter_logits(logits, 0, 1.0)), (std::vector<bool>(4, true)));
  // Kept logits are untouched, so renormalising gives the conditional distribution.
  const torch::Tensor f = filter_logits(logits, 0, 0.7);
  EXPECT_FLOAT_EQ(f[0][1].item<float>(), logits[0][1].item<float>());
}

TEST(sampling_filters, top_k_keeps_the_k_largest) {
  const torch::Tensor logits = hand_made_logits();
  EXPECT_EQ(kept(filter_logits(logits, 1, 1.0)), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(kept(filter_logits(logits, 3, 1.0)), (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(kept(filter_logits(logits, 10, 1.0)), (std::vector<bool>(4, true)));
  // top_k then top_p: of {0.5, 0.3, 0.15} renormalised, 0.6 of the mass needs two tokens.
  EXPECT_EQ(kept(filter_logits(logits, 3, 0.6)), (std::vector<bool>{false, true, false, true}));
}

TEST(sampling_filters, filtered_tokens_are_never_drawn) {
  constexpr int64_t draws = 4000;
  const torch::Tensor logits = hand_made_logits().expand({draws, 4}).contiguous();
  sampling_options o;
  o.top_p = 0.7;
  o.seed = 5;
  token_sampler sampler(o, torch::kCPU);
  const torch::Tensor tokens = sampler.next(logits);
  const torch::Tensor counts = torch::bincount(tokens, {}, 4);
  EXPECT_EQ(counts[0].item<int64_t>(), 0);
  EXPECT_EQ(counts[2].item<int64_t>(), 0);
  // The survivors keep their relative odds: 0.5 / 0.8 of the draws go to token 1.
  const double share = counts[1].item<double>() / draws;
  EXPECT_NEAR(share, 0.625, 0.05);
  o.top_p = 1.0;
  o.top_k = 1;
  token_sampler top1(o, torch::kCPU);
  EXPECT_TRUE(top1.next(logits).eq(1).all().item<bool>());
}

TEST(sampling_filters, temperature_sharpens_and_options_are_checked) {
  constexpr int64_t draws = 4000;
  const torch::Tensor logits = hand_made_logits().expand({draws, 4}).contiguous();
  sampling_options o;
  o.seed = 11;
  o.temperature = 0.25;  // p^4 renormalised: token 1 gets 0.0625 / 0.0707 of the draws
  token_sampler sampler(o, torch::kCPU);
  const torch::Tensor counts = torch::bincount(sampler.next(logits), {}, 4);
  const double expected = std::pow(0.5, 4) / (std::pow(0.5, 4) + std::pow(0.3, 4) +
                                              std::pow(0.15, 4) + std::pow(0.05, 4));
  EXPECT_NEAR(counts[1].item<double>() / draws, expected, 0.03);
  EXPECT_THROW(token_sampler(sampling_options{-1.0, 0, 1.0, 0}, torch::kCPU), error);
  EXPECT_THROW(token_sampler(sampling_options{1.0, -2, 1.0, 0}, torch::kCPU), error);
  EXPECT_THROW(token_sampler(sampling_options{1.0, 0, 1.5, 0}, torch::kCPU), error);
  EXPECT_THROW(filter_logits(torch::zeros({4}), 0, 0.5), error);
}

}  // namespace
}  // namespace sparserl
