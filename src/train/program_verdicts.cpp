#include "train/program_verdicts.h"

#include "kernel/program_identity.h"

namespace sparserl::train {

template <class Judge>
verdict program_verdicts::find_or_judge(const csr_matrix* matrix, const std::string& identity,
                                        Judge run) {
  const auto key = std::make_pair(matrix, identity);
  if (const auto it = seen_.find(key); it != seen_.end()) {
    ++shared_;
    return it->second;
  }
  return seen_.emplace(key, run()).first->second;
}

verdict program_verdicts::judge(evaluator& e, const eval_task& task,
                                const std::string& completion) {
  return find_or_judge(task.matrix, program_identity(completion, task.op),
                       [&] { return e.evaluate(task, completion); });
}

verdict program_verdicts::judge(evaluator& e, const eval_task& task,
                                const kernel_program& program) {
  return find_or_judge(task.matrix, program_identity(program.to_text(), task.op),
                       [&] { return e.evaluate_program(task, program); });
}

}  // namespace sparserl::train
