#pragma once
// The autotuner: evaluates the expert library's candidates for one task (the space pruned by the
// matrix's features) through the evaluator, so every candidate is verified before it is timed,
// and ranks the correct ones by measured time. It lives in eval/ rather than kernel/ (DESIGN.md
// lists it under kernel/) because it needs the evaluator, and kernel/ may not depend on eval/.
#include <optional>
#include <vector>

#include "eval/evaluator.h"
#include "kernel/expert_library.h"

namespace sparserl {

struct tuned_candidate {
  expert_config config;
  kernel_program program;
  verdict result;
};

struct tune_result {
  std::vector<tuned_candidate> ranked;   // correct first, by kernel time; then the failures
  expert_config heuristic;               // what pick_heuristic chose without timing
  std::optional<size_t> heuristic_rank;  // its index in `ranked`, when it was in the space
  int correct = 0;
  double wall_s = 0;
  const tuned_candidate* best() const;  // the fastest correct candidate, nullptr when none
};

// Evaluates every candidate with `threads` concurrent evaluations (the runner's pool bounds the
// real parallelism; timing is exclusive per GPU inside the workers).
tune_result autotune(evaluator& eval, const eval_task& task, int threads = 1);

}  // namespace sparserl
