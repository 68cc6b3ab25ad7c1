#pragma once
// Judging a step's rollouts with the evaluation harness (compile -> run -> verify -> time: the
// hierarchical reward), the programs shared out over `threads` threads.
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "train/ppo_task.h"
#include "train/rollouts.h"

namespace sparserl::train {

// Each row's program_identity (the same parsed program up to comments and whitespace), made once
// a step: the judge and the rollout log both key on it.
std::vector<std::string> rollout_identities(const rollouts& r, const std::vector<ppo_task>& tasks);

// For each row of `r`, the first row with the same task and the same identity (itself when it is
// the first).
std::vector<size_t> distinct_rollouts(const rollouts& r,
                                      const std::vector<std::string>& identities);

// The verdict of every row of `r`, in row order. A program sampled more than once for one task
// (textual variants included) is judged once and its verdict shared: timing noise would otherwise
// give identical programs different rewards, which a group-relative baseline turns into
// advantages (a group of one program repeated G times then counts as tied and is left out, as it
// should).
std::vector<verdict> judge_rollouts(evaluator& judge, const std::vector<ppo_task>& tasks,
                                    const rollouts& r, const std::vector<std::string>& identities,
                                    int threads);

}  // namespace sparserl::train
