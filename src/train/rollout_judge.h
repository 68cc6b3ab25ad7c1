#pragma once
// Judging a step's rollouts with the evaluation harness (compile -> run -> verify -> time: the
// hierarchical reward), the programs shared out over `threads` threads.
#include <vector>

#include "eval/evaluator.h"
#include "train/ppo_task.h"
#include "train/rollouts.h"

namespace sparserl::train {

// The verdict of every row of `r`, in row order.
std::vector<verdict> judge_rollouts(evaluator& judge, const std::vector<ppo_task>& tasks,
                                    const rollouts& r, int threads);

}  // namespace sparserl::train
