// Programs from the expert library: the feature heuristic's pick (no timing) and the autotuner
// (every candidate of the pruned space evaluated, the correct ones ranked by measured time).
#include <nanobind/stl/string.h>

#include <nlohmann/json.hpp>

#include "bindings.h"
#include "eval/autotune.h"
#include "kernel/heuristic.h"
#include "python_evaluator.h"
#include "sparse/error.h"
#include "sparse/features.h"

namespace nb = nanobind;

namespace sparserl::python {
namespace {

// The ranking as JSON text: `sparserl tune --json`'s summary fields, and per candidate the verdict
// (verdict_to_json), its configuration and its program text.
std::string tune(python_evaluator& eval, const csr_matrix& matrix, const std::string& op, int32_t k,
                 int threads) {
  const tune_result r = autotune(eval.core(), python_task(matrix, op, k), threads);
  nlohmann::json j = {{"executor", eval.executor()},
                      {"op", op},
                      {"wall_s", r.wall_s},
                      {"correct", r.correct},
                      {"heuristic", r.heuristic.describe()},
                      {"heuristic_rank", r.heuristic_rank ? nlohmann::json(*r.heuristic_rank)
                                                          : nlohmann::json(nullptr)},
                      {"candidates", nlohmann::json::array()}};
  for (const tuned_candidate& c : r.ranked) {
    nlohmann::json v = verdict_to_json(c.result);
    v["config"] = c.config.describe();
    v["program"] = c.program.to_text();
    j["candidates"].push_back(std::move(v));
  }
  return j.dump();
}

}  // namespace

void bind_program(nb::module_& m) {
  m.def(
      "heuristic_program",
      [](const csr_matrix& matrix, const std::string& op, int32_t k) {
        const eval_task task = python_task(matrix, op, k);
        const expert_config config = pick_heuristic(task.op, compute_features(matrix), task.k);
        return nb::make_tuple(emit_program(config).to_text(), config.describe());
      },
      nb::arg("matrix"), nb::arg("op") = "spmv", nb::arg("k") = 64,
      "The feature heuristic's expert program for the matrix: (program text, configuration)");
  m.def(
      "expert_programs",
      [](const csr_matrix& matrix, const std::string& op, int32_t k) {
        const eval_task task = python_task(matrix, op, k);
        nb::list out;
        for (const expert_config& c : expert_space(task.op, compute_features(matrix), task.k))
          out.append(nb::make_tuple(c.describe(), emit_program(c).to_text()));
        return out;
      },
      nb::arg("matrix"), nb::arg("op") = "spmv", nb::arg("k") = 64,
      "The autotuner's space for the matrix, untimed: [(configuration, program text)]");
  m.def("tune", &tune, nb::arg("evaluator"), nb::arg("matrix"), nb::arg("op") = "spmv",
        nb::arg("k") = 64, nb::arg("threads") = 1, nb::call_guard<nb::gil_scoped_release>(),
        "Autotunes the expert library on the matrix; the ranking as JSON text");
}

}  // namespace sparserl::python
