// The group-relative advantages (RLOO, GRPO) against values worked out by hand, the dropping of
// groups whose samples all scored alike, and the KL term of the sequence reward.
#include <gtest/gtest.h>
#include <torch/types.h>

#include <cmath>

#include "sparse/error.h"
#include "train/advantage_estimator.h"
#include "train/group_advantage.h"

namespace sparserl::train {
namespace {

TEST(group_advantage, rloo_subtracts_the_mean_of_the_other_samples) {
  // sum 1: 1 - 0/3, 0 - 1/3, 0.5 - 0.5/3, -0.5 - 1.5/3
  const std::vector<double> a = rloo_advantages({1.0, 0.0, 0.5, -0.5});
  ASSERT_EQ(a.size(), 4u);
  EXPECT_NEAR(a[0], 1.0, 1e-12);
  EXPECT_NEAR(a[1], -1.0 / 3, 1e-12);
  EXPECT_NEAR(a[2], 1.0 / 3, 1e-12);
  EXPECT_NEAR(a[3], -1.0, 1e-12);
  const std::vector<double> pair = rloo_advantages({2.0, -1.0});
  EXPECT_NEAR(pair[0], 3.0, 1e-12);
  EXPECT_NEAR(pair[1], -3.0, 1e-12);
}

TEST(group_advantage, grpo_normalises_by_the_group_mean_and_std) {
  // mean 0.25; squared deviations 0.5625 + 0.0625 + 0.0625 + 0.5625 = 1.25; std sqrt(1.25 / 3)
  const double std = std::sqrt(1.25 / 3);
  const std::vector<double> a = grpo_advantages({1.0, 0.0, 0.5, -0.5}, 1e-4);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_NEAR(a[0], 0.75 / (std + 1e-4), 1e-12);
  EXPECT_NEAR(a[0], 1.1617150317, 1e-9);
  EXPECT_NEAR(a[1], -0.25 / (std + 1e-4), 1e-12);
  EXPECT_NEAR(a[2], 0.25 / (std + 1e-4), 1e-12);
  EXPECT_NEAR(a[3], -0.75 / (std + 1e-4), 1e-12);
}

TEST(group_advantage, a_group_needs_two_samples) {
  EXPECT_THROW(rloo_advantages({1.0}), error);
  EXPECT_THROW(grpo_advantages({1.0}, 1e-4), error);
}

TEST(group_advantage, ties_are_within_one_millionth) {
  EXPECT_TRUE(group_tied({0.5, 0.5 + 5e-7, 0.5}));
  EXPECT_FALSE(group_tied({0.5, 0.5 + 2e-6}));
  EXPECT_TRUE(group_tied({-1.0}));
}

// Two groups of three: the first all correct alike (tied, dropped), the second spread.
advantage_inputs two_groups(double kl_coef) {
  advantage_inputs in;
  in.scores = torch::tensor({1.0f, 1.0f, 1.0f, 0.0f, -1.0f, 1.0f});
  in.mask = torch::tensor({1.f, 1.f, 0.f, 1.f, 0.f, 0.f, 1.f, 1.f, 1.f, 1.f, 1.f, 0.f, 1.f, 0.f,
                           0.f, 1.f, 1.f, 1.f})
                .view({6, 3});
  in.ref_logprobs = torch::full({6, 3}, -1.0f);
  in.logprobs = in.ref_logprobs.clone();
  in.logprobs[3][0] = -0.9f;  // row 3: KL 0.1 + 0.1 on its two real tokens
  in.logprobs[3][1] = -0.9f;
  in.logprobs[3][2] = 5.0f;  // padding: not counted
  in.group = {0, 0, 0, 1, 1, 1};
  in.kl_coef = kl_coef;
  return in;
}

TEST(group_advantage, tied_groups_are_left_out_and_counted) {
  const advantage_result r = make_rloo_estimator()->estimate(two_groups(0.0));
  EXPECT_EQ(r.groups, 2);
  EXPECT_EQ(r.groups_tied, 1);
  EXPECT_EQ(r.used, (std::vector<int64_t>{3, 4, 5}));
  EXPECT_FALSE(r.returns.defined());
  // Rows 0-2 (tied) get nothing; the others their RLOO advantage on every real token.
  const torch::Tensor expected =
      torch::tensor({0.0, 0.0, 0.0, 0.0 - 0.0 / 2, -1.0 - 1.0 / 2, 1.0 - (-1.0) / 2})
          .to(torch::kFloat32)
          .unsqueeze(1) *
      two_groups(0.0).mask;
  EXPECT_TRUE(torch::allclose(r.advantages, expected)) << r.advantages;
}

TEST(group_advantage, the_kl_penalty_enters_the_sequence_reward) {
  // Row 3's sequence reward: 0 - 0.5 * (0.1 + 0.1) = -0.1; rewards of group 1: -0.1, -1, 1.
  const advantage_result r = make_rloo_estimator()->estimate(two_groups(0.5));
  EXPECT_NEAR(r.advantages[3][0].item<double>(), -0.1 - 0.0 / 2, 1e-5);
  EXPECT_NEAR(r.advantages[4][0].item<double>(), -1.0 - 0.9 / 2, 1e-5);
  EXPECT_NEAR(r.advantages[5][0].item<double>(), 1.0 - (-1.1) / 2, 1e-5);
  EXPECT_EQ(r.advantages[3][2].item<double>(), 0.0);  // padding stays 0
  const advantage_result g = make_grpo_estimator()->estimate(two_groups(0.0));
  EXPECT_EQ(g.groups_tied, 1);
  EXPECT_NEAR(g.advantages[5][0].item<double>(), 1.0 / (1.0 + 1e-4), 1e-5);  // mean 0, std 1
}

TEST(group_advantage, estimators_by_name) {
  const gae_options gae;
  EXPECT_STREQ(make_advantage_estimator("rloo", gae)->name(), "rloo");
  EXPECT_STREQ(make_advantage_estimator("grpo", gae)->name(), "grpo");
  EXPECT_TRUE(make_advantage_estimator("gae", gae)->uses_value_head());
  EXPECT_FALSE(make_advantage_estimator("rloo", gae)->uses_value_head());
  EXPECT_THROW(make_advantage_estimator("ppo", gae), error);
}

}  // namespace
}  // namespace sparserl::train
