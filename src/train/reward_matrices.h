#pragma once
// Which matrices PPO and policy evaluation time programs on. On a GPU a kernel over a small matrix
// runs in a few microseconds, where the launch (~3-5 us on the H200) and not the program sets the
// time, so the speed term of the reward would rank programs by noise. The rule: on a GPU runner,
// reward matrices have at least `gpu_reward_min_nnz` nonzeros (docs/training.md, "Reward
// matrices", gives the measurements behind the default). On the CPU emulator nothing is timed
// (the reward is correctness only) and every size is kept.
#include <cstdint>
#include <string>
#include <vector>

#include "train/sft_data.h"

namespace sparserl::train {

// H200: at ~1M nonzeros the expert programs take 10-30 us and differ by 1.4-2x; below ~0.3M
// they take ~5-10 us, within a few launch times of each other (docs/benchmarks.md).
inline constexpr int64_t gpu_reward_min_nnz = 1000000;

// The floor for a runner: `requested` when >= 0, else gpu_reward_min_nnz on "gpu" and 0 elsewhere.
int64_t reward_min_nnz(int64_t requested, const std::string& runner_name);

struct reward_matrix_split {
  std::vector<sft_sample> kept;
  int64_t too_small = 0;
};

// The samples with at least `min_nnz` nonzeros, in order.
reward_matrix_split keep_reward_matrices(std::vector<sft_sample> samples, int64_t min_nnz);

}  // namespace sparserl::train
