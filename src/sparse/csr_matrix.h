#pragma once
// Compressed sparse row: the canonical in-memory form every other format is converted from.
// 32-bit indices (as cuSPARSE's default and the kernel ABI use): nnz and dimensions < 2^31.
#include <cstdint>
#include <vector>

namespace sparserl {

struct triplet {
  int32_t row;
  int32_t col;
  float value;
};

struct csr_matrix {
  int32_t rows = 0;
  int32_t cols = 0;
  std::vector<int32_t> row_ptr{0};  // rows + 1 entries, row_ptr[0] == 0
  std::vector<int32_t> col_idx;     // sorted ascending within each row, no duplicates
  std::vector<float> values;

  int64_t nnz() const { return static_cast<int64_t>(col_idx.size()); }
  int32_t row_length(int32_t row) const { return row_ptr[row + 1] - row_ptr[row]; }
};

// Builds a CSR matrix from unordered triplets; duplicate (row, col) entries are summed.
// Throws sparserl::error when an index is outside [0, rows) x [0, cols).
csr_matrix csr_from_triplets(int32_t rows, int32_t cols, std::vector<triplet> entries);

// The longest row's nonzeros (0 for a matrix without rows): ELL's width, the prompt's "at most".
int32_t max_row_length(const csr_matrix& a);

// How far the nonzeros lie from the diagonal, |col - row|: the largest (the bandwidth) and the
// mean over the nonzeros (both 0 without nonzeros). The mean tells a matrix whose accesses to x
// stay local (a mesh in its natural or RCM order) from one in a random node order, where a few
// far entries already make the largest large.
struct diagonal_distance {
  int64_t largest = 0;
  double mean = 0;
};
diagonal_distance distance_from_diagonal(const csr_matrix& a);

// Throws sparserl::error naming the first broken invariant (sizes, monotone row_ptr, sorted
// columns).
void validate_csr(const csr_matrix& matrix);

// y = A x, inputs and outputs in float, each row accumulated in double (the verification
// reference).
void spmv_reference(const csr_matrix& matrix, const float* x, float* y);

// C = A B with B dense (cols x k, row-major) and C dense (rows x k, row-major), double
// accumulation.
void spmm_reference(const csr_matrix& matrix, const float* b, int32_t k, float* c);

}  // namespace sparserl
