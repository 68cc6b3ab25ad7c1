#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "train/ppo_math.h"

namespace sparserl::train {
namespace {

torch::Tensor row(std::vector<float> v) { return torch::tensor(v).unsqueeze(0); }

TEST(ppo_math, token_logprobs_match_log_softmax) {
  torch::Tensor logits = torch::tensor({1.0f, 2.0f, 3.0f}).view({1, 1, 3});
  torch::Tensor lp = token_logprobs(logits, torch::tensor({2}, torch::kInt64).view({1, 1}));
  const double z = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(lp.item<double>(), 3.0 - z, 1e-6);
}

TEST(ppo_math, entropy_of_uniform_is_log_n) {
  torch::Tensor logits = torch::zeros({1, 2, 8});
  EXPECT_NEAR(token_entropy(logits)[0][1].item<double>(), std::log(8.0), 1e-6);
}

TEST(ppo_math, kl_shaped_rewards_put_the_score_on_the_last_real_token) {
  torch::Tensor mask = torch::tensor({1.0f, 1.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f}).view({2, 4});
  torch::Tensor lp = torch::full({2, 4}, -1.0f), ref = torch::full({2, 4}, -1.5f);
  torch::Tensor r = kl_shaped_rewards(torch::tensor({2.0f, -1.0f}), lp, ref, mask, 0.1);
  // -0.1 * (-1 - -1.5) = -0.05 on every real token.
  EXPECT_NEAR(r[0][0].item<float>(), -0.05f, 1e-6);
  EXPECT_NEAR(r[0][2].item<float>(), -0.05f + 2.0f, 1e-6);
  EXPECT_EQ(r[0][3].item<float>(), 0.0f);
  EXPECT_NEAR(r[1][0].item<float>(), -0.05f - 1.0f, 1e-6);
  EXPECT_EQ(r[1][1].item<float>(), 0.0f);
}

TEST(ppo_math, gae_matches_a_hand_computed_recursion) {
  // One sequence of 3 tokens, gamma 0.9, lambda 0.8; returns = advantages + values.
  torch::Tensor rewards = row({0.0f, 0.0f, 1.0f}), values = row({0.5f, 0.2f, 0.1f});
  torch::Tensor mask = row({1, 1, 1});
  const double g = 0.9, l = 0.8;
  const double d2 = 1.0 - 0.1, d1 = 0.0 + g * 0.1 - 0.2, d0 = 0.0 + g * 0.2 - 0.5;
  const double a2 = d2, a1 = d1 + g * l * a2, a0 = d0 + g * l * a1;
  gae_result out = compute_gae(rewards, values, mask, g, l);
  EXPECT_NEAR(out.returns[0][0].item<double>(), a0 + 0.5, 1e-6);
  EXPECT_NEAR(out.returns[0][1].item<double>(), a1 + 0.2, 1e-6);
  EXPECT_NEAR(out.returns[0][2].item<double>(), a2 + 0.1, 1e-6);
  EXPECT_NEAR(out.advantages.mean().item<double>(), 0.0, 1e-6);  // whitened
}

TEST(ppo_math, gae_does_not_leak_across_padding) {
  torch::Tensor rewards = row({1.0f, 5.0f}), values = row({0.0f, 3.0f}), mask = row({1, 0});
  gae_result out = compute_gae(rewards, values, mask, 1.0, 1.0);
  EXPECT_NEAR(out.returns[0][0].item<double>(), 1.0, 1e-6);  // the padded value is not bootstrapped
  EXPECT_EQ(out.returns[0][1].item<double>(), 0.0);
}

TEST(ppo_math, policy_loss_is_clipped) {
  torch::Tensor mask = row({1, 1});
  torch::Tensor adv = row({1.0f, -1.0f});
  torch::Tensor old_lp = row({0.0f, 0.0f});
  torch::Tensor new_lp = row({std::log(2.0f), std::log(2.0f)});  // ratio 2 on both
  torch::Tensor v = row({0, 0});
  ppo_loss_terms t = ppo_losses(new_lp, old_lp, v, v, adv, v, mask, {0.2, 0.2, 0.1});
  // +adv: min(2, 1.2) * 1 -> loss -1.2; -adv: max(-(-1)*2, -(-1)*1.2) = 2 -> mean 0.4.
  EXPECT_NEAR(t.policy_loss.item<double>(), (-1.2 + 2.0) / 2, 1e-6);
  EXPECT_NEAR(t.clip_fraction.item<double>(), 0.5, 1e-6);
}

TEST(ppo_math, value_loss_takes_the_larger_of_clipped_and_unclipped) {
  torch::Tensor mask = row({1});
  torch::Tensor values = row({1.0f}), old_values = row({0.0f}), returns = row({1.0f});
  torch::Tensor z = row({0.0f});
  ppo_loss_terms t = ppo_losses(z, z, values, old_values, z, returns, mask, {0.2, 0.2, 0.1});
  // unclipped error 0, clipped value 0.2 -> error 0.64; 0.5 * max = 0.32.
  EXPECT_NEAR(t.value_loss.item<double>(), 0.32, 1e-6);
}

TEST(ppo_math, masked_statistics_ignore_padding) {
  torch::Tensor x = row({1.0f, 3.0f, 100.0f}), mask = row({1, 1, 0});
  EXPECT_NEAR(masked_mean(x, mask).item<double>(), 2.0, 1e-6);
  EXPECT_NEAR(masked_var(x, mask).item<double>(), 2.0, 1e-6);  // Bessel: ((1)^2+(1)^2)/1
  torch::Tensor w = masked_whiten(x, mask);
  EXPECT_EQ(w[0][2].item<float>(), 0.0f);
  EXPECT_NEAR(w[0][0].item<float>(), -1.0f / std::sqrt(2.0f), 1e-4);
}

TEST(ppo_math, adaptive_kl_moves_towards_the_target) {
  kl_controller fixed(0.05, 0, 10000);
  fixed.update(10.0, 8);
  EXPECT_EQ(fixed.value(), 0.05);
  kl_controller adaptive(0.05, 1.0, 100);
  adaptive.update(3.0, 10);  // KL too high: error clipped to 0.2 -> x (1 + 0.2 * 0.1)
  EXPECT_NEAR(adaptive.value(), 0.05 * 1.02, 1e-12);
  adaptive.update(0.0, 10);  // too low: x (1 - 0.2 * 0.1)
  EXPECT_NEAR(adaptive.value(), 0.05 * 1.02 * 0.98, 1e-12);
}

}  // namespace
}  // namespace sparserl::train
