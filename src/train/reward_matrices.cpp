#include "train/reward_matrices.h"

#include <utility>

namespace sparserl::train {

int64_t reward_min_nnz(int64_t requested, const std::string& runner_name) {
  if (requested >= 0) return requested;
  return runner_name == "gpu" ? gpu_reward_min_nnz : 0;
}

reward_matrix_split keep_reward_matrices(std::vector<sft_sample> samples, int64_t min_nnz) {
  reward_matrix_split out;
  for (sft_sample& s : samples) {
    if (s.nnz() < min_nnz) {
      ++out.too_small;
      continue;
    }
    out.kept.push_back(std::move(s));
  }
  return out;
}

}  // namespace sparserl::train
