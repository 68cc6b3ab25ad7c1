#pragma once
// The square block size a matrix's structure has: FEM matrices with k degrees of freedom per
// node are made of dense k x k blocks (k = 3 in 3D elasticity, 6 for shells), and BSR with that
// block stores one column index per k*k values instead of one per value.
#include <cstdint>

#include "sparse/csr_matrix.h"

namespace sparserl {

struct block_shape {
  int32_t size = 1;  // b: aligned b x b blocks (rows and columns b*i .. b*i + b - 1)
  double fill = 0;   // nnz / (nonzero b x b blocks * b * b); 1 = every block dense
};

// The largest b in 2..max_size whose aligned b x b blocks are at least min_fill full, else
// {1, fill of 1 x 1 blocks = 1 (0 for an empty matrix)}. A size is only counted when at least 90%
// of the non-empty rows have a length divisible by b (true of every row of a k-dof FEM matrix;
// it keeps the full count off matrices that cannot be blocked).
block_shape detect_block_shape(const csr_matrix& a, int32_t max_size = 8, double min_fill = 0.9);

// nnz / (nonzero aligned b x b blocks * b * b), 0 for an empty matrix.
double block_fill(const csr_matrix& a, int32_t b);

}  // namespace sparserl
