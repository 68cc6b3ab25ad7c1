#pragma once
// The pieces of the sparserl._core module, one file per concept; core_module.cpp calls them all.
#include <nanobind/nanobind.h>

namespace sparserl::python {

void bind_matrix(nanobind::module_& m);     // matrix_binding.cpp: Matrix (CSR), .mtx, generators
void bind_evaluator(nanobind::module_& m);  // evaluator_binding.cpp: Evaluator, verdicts as JSON
void bind_program(nanobind::module_& m);    // program_binding.cpp: the heuristic, the autotuner
void bind_device_kernel(nanobind::module_& m);  // device_kernel_binding.cpp: sparserl.compile's
                                                // preparation (compiled image, format arrays)

}  // namespace sparserl::python
