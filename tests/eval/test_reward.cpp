// The reward's tiers are ordered and the speed and memory terms behave as documented.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/reward.h"

namespace sparserl {
namespace {

verdict correct_verdict() {
  verdict v;
  v.extracted = v.compiled = v.ran = v.correct = true;
  return v;
}

TEST(reward, tiers_are_ordered) {
  verdict none;
  verdict no_compile = none;
  no_compile.extracted = true;
  verdict wrong = no_compile;
  wrong.compiled = wrong.ran = true;
  const reward_config c;
  const double r_none = compute_reward(none, 1000, c);
  const double r_compile = compute_reward(no_compile, 1000, c);
  const double r_wrong = compute_reward(wrong, 1000, c);
  const double r_correct = compute_reward(correct_verdict(), 1000, c);
  EXPECT_EQ(r_none, c.no_program);
  EXPECT_EQ(r_compile, c.compile_error);
  EXPECT_EQ(r_wrong, c.runtime_failure);
  EXPECT_EQ(r_correct, c.correct);
  EXPECT_LT(r_none, r_compile);
  EXPECT_LT(r_compile, r_wrong);
  EXPECT_LT(r_wrong, r_correct);
}

TEST(reward, speed_term_is_clipped_log_ratio) {
  reward_config c;
  verdict v = correct_verdict();
  v.speedup = 2.0;
  EXPECT_DOUBLE_EQ(compute_reward(v, 1000, c), c.correct + 1.0);
  v.speedup = 0.8;
  EXPECT_DOUBLE_EQ(compute_reward(v, 1000, c), c.correct + std::log2(0.8));
  v.speedup = 1e6;
  EXPECT_DOUBLE_EQ(compute_reward(v, 1000, c), c.correct + c.speed_clip_high);
  // A slow but correct program still beats any wrong one.
  v.speedup = 1e-6;
  v.footprint_bytes = 1000000;
  EXPECT_GT(compute_reward(v, 1000, c), c.runtime_failure);
}

TEST(reward, memory_beyond_csr_is_penalised) {
  reward_config c;
  verdict v = correct_verdict();
  v.footprint_bytes = 1100;  // 1.1x CSR
  EXPECT_DOUBLE_EQ(compute_reward(v, 1000, c), c.correct - c.memory_weight * std::log2(1.1));
  v.footprint_bytes = 64000;  // 64x CSR: clipped
  EXPECT_DOUBLE_EQ(compute_reward(v, 1000, c), c.correct - c.memory_clip);
  v.footprint_bytes = 500;  // smaller than CSR: no bonus
  EXPECT_DOUBLE_EQ(compute_reward(v, 1000, c), c.correct);
}

TEST(reward, wrong_program_gets_no_speed_term) {
  verdict v = correct_verdict();
  v.correct = false;
  v.speedup = 10.0;
  EXPECT_EQ(compute_reward(v, 1000, reward_config{}), reward_config{}.runtime_failure);
}

}  // namespace
}  // namespace sparserl
