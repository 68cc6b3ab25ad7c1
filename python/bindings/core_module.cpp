// sparserl._core: the C++ core without torch (python/sparserl/ wraps it; python/CMakeLists.txt).
#include "bindings.h"
#include "sparse/error.h"

NB_MODULE(_core, m) {
  m.doc() = "sparserl's C++ core: matrices, the evaluator, the heuristic and the autotuner";
  // sparserl::error is a user-facing failure (bad file, bad argument): ValueError's kind.
  nanobind::exception<sparserl::error>(m, "Error", PyExc_ValueError);
  sparserl::python::bind_matrix(m);
  sparserl::python::bind_evaluator(m);
  sparserl::python::bind_program(m);
  sparserl::python::bind_device_kernel(m);
}
