#pragma once
// One verdict per matrix and program over an evaluation. A program written again for the same
// matrix (textual variants included: program_identity), by the policy or by a baseline, gets the
// verdict it already has: timing the same program twice gives two draws of the timing noise, and
// comparing the draws (the policy's greedy program against the heuristic's identical pick, best
// of K over repeats of one program) measures the noise, not the programs. PPO's rollout judge
// shares verdicts the same way (train/rollout_judge.h).
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "eval/evaluator.h"
#include "kernel/program.h"

namespace sparserl::train {

class program_verdicts {
 public:
  // Keyed by the task's matrix (its address: the matrices outlive the evaluation's verdicts);
  // `completion` is what a policy wrote.
  verdict judge(evaluator& e, const eval_task& task, const std::string& completion);
  verdict judge(evaluator& e, const eval_task& task, const kernel_program& program);

  // Verdicts handed out again instead of judging the program once more.
  int64_t shared() const { return shared_; }

 private:
  std::map<std::pair<const csr_matrix*, std::string>, verdict> seen_;  // (matrix, identity)
  int64_t shared_ = 0;

  template <class Judge>
  verdict find_or_judge(const csr_matrix* matrix, const std::string& identity, Judge run);
};

}  // namespace sparserl::train
