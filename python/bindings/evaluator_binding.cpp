// Evaluator (python_evaluator.h) for Python. Verdicts come back as the JSON text of
// eval/verdict.h's verdict_to_json; python/sparserl/evaluate.py parses them into dicts.
// Evaluations run without the GIL, so Python threads and the batch call overlap them.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "bindings.h"
#include "cli/runner_choice.h"
#include "python_evaluator.h"
#include "sparse/error.h"

namespace nb = nanobind;

namespace sparserl::python {

eval_task python_task(const csr_matrix& matrix, const std::string& op, int32_t k) {
  const std::optional<sparse_op> parsed = parse_op(op);
  if (!parsed) throw error("op " + op + ": expected spmv or spmm");
  if (*parsed == sparse_op::spmm && (k < 1 || k > 4096)) throw error("k must be in 1..4096");
  return eval_task{*parsed, &matrix, *parsed == sparse_op::spmm ? k : 1, "python"};
}

python_evaluator::python_evaluator(const std::string& device, int trials, double timeout_s,
                                   const std::string& arch, int workers)
    : runner_(cli::make_runner(device, workers)) {
  if (trials < 1) throw error("trials must be at least 1");
  eval_options options;
  options.trials = trials;
  options.compile.arch = arch.empty() ? cli::device_arch(*runner_) : arch;
  options.limits.launch_timeout_s = timeout_s;
  evaluator_ = std::make_unique<evaluator>(*runner_, options);
}

std::string python_evaluator::evaluate(const csr_matrix& matrix, const std::string& completion,
                                       const std::string& op, int32_t k) {
  return verdict_to_json(evaluator_->evaluate(python_task(matrix, op, k), completion)).dump();
}

std::vector<std::string> python_evaluator::evaluate_many(
    const std::vector<const csr_matrix*>& matrices, const std::vector<std::string>& completions,
    const std::vector<std::string>& ops, const std::vector<int32_t>& ks, int threads) {
  const size_t n = completions.size();
  if (matrices.size() != n || ops.size() != n || ks.size() != n)
    throw error(std::to_string(n) + " completions for " + std::to_string(matrices.size()) +
                " matrices, " + std::to_string(ops.size()) + " ops and " +
                std::to_string(ks.size()) + " ks");
  std::vector<eval_task> tasks;
  for (size_t i = 0; i < n; ++i) tasks.push_back(python_task(*matrices[i], ops[i], ks[i]));
  std::vector<std::string> out(n);
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        out[i] = verdict_to_json(evaluator_->evaluate(tasks[i], completions[i])).dump();
      } catch (...) {  // a broken installation, not a bad program (those are verdicts)
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  const size_t count = std::min(n, static_cast<size_t>(std::max(1, threads)));
  for (size_t t = 1; t < count; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

void bind_evaluator(nb::module_& m) {
  nb::class_<python_evaluator>(m, "Evaluator",
                               "The harness's evaluator on the CPU emulator or the GPU workers")
      .def(nb::init<const std::string&, int, double, const std::string&, int>(),
           nb::arg("device") = "cpu", nb::arg("trials") = 3, nb::arg("timeout") = 5.0,
           nb::arg("arch") = "", nb::arg("workers") = 1, nb::call_guard<nb::gil_scoped_release>())
      .def_prop_ro("executor", &python_evaluator::executor)
      .def("evaluate", &python_evaluator::evaluate, nb::arg("matrix"), nb::arg("completion"),
           nb::arg("op") = "spmv", nb::arg("k") = 64, nb::call_guard<nb::gil_scoped_release>(),
           "The verdict of one completion (or program text) as JSON text")
      .def("evaluate_many", &python_evaluator::evaluate_many, nb::arg("matrices"),
           nb::arg("completions"), nb::arg("ops"), nb::arg("ks"), nb::arg("threads") = 2,
           nb::call_guard<nb::gil_scoped_release>(),
           "The verdicts of completions[i] on matrices[i] (ops[i], ks[i]) as JSON texts");
}

}  // namespace sparserl::python
