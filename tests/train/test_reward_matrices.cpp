// The reward-matrix rule: on a GPU runner, matrices under the nonzero floor are left out of PPO and
// evaluation (their time is the launch's); on the CPU emulator every size is kept.
#include <gtest/gtest.h>

#include "sparse/generators.h"
#include "train/reward_matrices.h"

namespace sparserl::train {
namespace {

sft_sample banded(int32_t rows) {
  generator_spec spec;
  spec.family = "banded";
  spec.rows = rows;
  spec.bandwidth = 2;
  sft_sample s = sft_pattern_of(generate_matrix(spec));
  s.name = "banded" + std::to_string(rows);
  return s;
}

TEST(reward_matrices, the_floor_is_the_gpu_default_unless_asked_and_none_on_the_cpu) {
  EXPECT_EQ(reward_min_nnz(-1, "gpu"), gpu_reward_min_nnz);
  EXPECT_EQ(reward_min_nnz(-1, "cpu"), 0);
  EXPECT_EQ(reward_min_nnz(0, "gpu"), 0);
  EXPECT_EQ(reward_min_nnz(5000, "cpu"), 5000);
}

TEST(reward_matrices, smaller_matrices_are_counted_and_left_out_in_order) {
  std::vector<sft_sample> samples = {banded(100), banded(1000), banded(50), banded(2000)};
  const int64_t floor = samples[1].nnz();  // a matrix with exactly the floor is kept
  ASSERT_GT(floor, samples[0].nnz());
  const reward_matrix_split r = keep_reward_matrices(samples, floor);
  ASSERT_EQ(r.kept.size(), 2u);
  EXPECT_EQ(r.kept[0].name, "banded1000");
  EXPECT_EQ(r.kept[1].name, "banded2000");
  EXPECT_EQ(r.too_small, 2);
  EXPECT_EQ(keep_reward_matrices(samples, 0).kept.size(), 4u);
}

}  // namespace
}  // namespace sparserl::train
