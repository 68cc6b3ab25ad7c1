#pragma once
// Structure checks shared by the generator tests: transpose, structural symmetry, equality.
#include <vector>

#include "sparse/csr_matrix.h"

namespace sparserl::testing_support {

inline csr_matrix transpose(const csr_matrix& a) {
  std::vector<triplet> entries;
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i)
      entries.push_back({a.col_idx[i], r, a.values[i]});
  return csr_from_triplets(a.cols, a.rows, entries);
}

inline bool structurally_symmetric(const csr_matrix& a) {
  const csr_matrix t = transpose(a);
  return a.row_ptr == t.row_ptr && a.col_idx == t.col_idx;
}

inline bool same(const csr_matrix& a, const csr_matrix& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
         a.values == b.values;
}

}  // namespace sparserl::testing_support
