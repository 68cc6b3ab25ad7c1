#pragma once
// What the group-relative estimators (RLOO, GRPO) share: each rollout's sequence reward (the
// harness's score minus kl_coef times its summed per-token KL to the reference, the KL-in-reward
// form of TRL's RLOOTrainer), the groups of samples drawn for one task, the dropping of groups
// whose samples all scored alike (no signal: |max - min| of the scores < tie_tolerance), and the
// sequence advantage broadcast over the program's tokens.
#include <functional>
#include <vector>

#include "train/advantage_estimator.h"

namespace sparserl::train {

inline constexpr double tie_tolerance = 1e-6;

// Whether the scores of one group are all alike (a group of one always is).
bool group_tied(const std::vector<double>& scores);

// RLOO (Ahmadian et al. 2024): r_i - mean of the other G - 1 rewards of the group. G >= 2.
std::vector<double> rloo_advantages(const std::vector<double>& rewards);

// GRPO (Shao et al. 2024): (r_i - mean) / (std + eps) over the group, std with Bessel's
// correction (as TRL's GRPOTrainer). G >= 2.
std::vector<double> grpo_advantages(const std::vector<double>& rewards, double eps);

// Splits `in` into groups, drops the tied ones, applies `per_group` to each other group's
// sequence rewards and broadcasts the result over the rollouts' response tokens.
advantage_result group_relative_advantages(
    const advantage_inputs& in,
    const std::function<std::vector<double>(const std::vector<double>&)>& per_group);

}  // namespace sparserl::train
