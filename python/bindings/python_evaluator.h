#pragma once
// The evaluator the Python package holds: the harness's evaluator (eval/evaluator.h) with its
// runner, the sandboxed CPU emulator or the GPU worker pool, chosen as `sparserl eval --device`
// does. Its caches (format conversions, trial inputs and references, cuSPARSE timings) are kept
// across calls, keyed by the matrix's content. Thread-safe, as the evaluator is.
#include <memory>
#include <string>
#include <vector>

#include "eval/evaluator.h"

namespace sparserl::python {

class python_evaluator {
 public:
  // device: "cpu", "gpu" or "auto"; arch "": the GPU's (sm_90 without one).
  python_evaluator(const std::string& device, int trials, double timeout_s, const std::string& arch,
                   int workers);

  std::string executor() const { return runner_->name(); }
  // verdict_to_json's text (the fields of `sparserl eval --json`).
  std::string evaluate(const csr_matrix& matrix, const std::string& completion,
                       const std::string& op, int32_t k);
  // completions[i] on matrices[i] with ops[i] and ks[i]; `threads` evaluations at once.
  std::vector<std::string> evaluate_many(const std::vector<const csr_matrix*>& matrices,
                                         const std::vector<std::string>& completions,
                                         const std::vector<std::string>& ops,
                                         const std::vector<int32_t>& ks, int threads);

  evaluator& core() { return *evaluator_; }

 private:
  std::unique_ptr<program_runner> runner_;
  std::unique_ptr<evaluator> evaluator_;
};

// The task of `op` ("spmv"/"spmm") with k columns (1 for SpMV) on `matrix`; throws sparserl::error
// on an unknown op or k outside 1..4096.
eval_task python_task(const csr_matrix& matrix, const std::string& op, int32_t k);

}  // namespace sparserl::python
