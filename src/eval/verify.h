#pragma once
// Verification against the double-accumulated CPU reference (DESIGN.md "Float tolerance").
// Element i passes when it is finite and |out - ref| <= eps_factor * FLT_EPSILON * (n_i + 1) *
// sum_j |a_ij| |x_j|, where n_i is the row's length: float rounding grows with the number of terms
// and with their magnitudes, not with the (possibly cancelled) result. A row whose terms are all
// zero must come out exactly zero.
#include <cstdint>
#include <string>
#include <vector>

#include "kernel/program.h"
#include "sparse/csr_matrix.h"

namespace sparserl {

struct reference_output {
  std::vector<float> value;  // A x (or A B)
  std::vector<float> bound;  // allowed absolute error per element
};

reference_output compute_reference(sparse_op op, const csr_matrix& a,
                                   const std::vector<float>& input, int32_t k,
                                   double eps_factor = 8.0);

struct check_result {
  bool ok = true;
  int64_t bad_elements = 0;
  int64_t poisoned_elements = 0;  // NaN or Inf (including the poison left by unwritten elements)
  int64_t first_bad = -1;         // flat index of the first failing element
  double max_error_ratio = 0;     // max |out - ref| / bound over finite elements
  std::string describe(sparse_op op,
                       int32_t k) const;  // "12 of 1000 elements wrong, first y[7]..."
};

check_result check_output(const reference_output& ref, const std::vector<float>& out);

}  // namespace sparserl
