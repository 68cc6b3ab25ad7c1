#include "sparse/block_shape.h"

#include <algorithm>
#include <vector>

#include "sparse/format_detail.h"

namespace sparserl {

namespace {

// Rows of a row block whose length is a multiple of b, over the non-empty rows.
bool lengths_divisible(const csr_matrix& a, int32_t b) {
  int64_t nonempty = 0, divisible = 0;
  for (int32_t r = 0; r < a.rows; ++r) {
    const int32_t n = a.row_length(r);
    if (n == 0) continue;
    ++nonempty;
    if (n % b == 0) ++divisible;
  }
  return nonempty > 0 && divisible >= 0.9 * static_cast<double>(nonempty);
}

}  // namespace

double block_fill(const csr_matrix& a, int32_t b) {
  if (a.nnz() == 0 || b < 1) return 0;
  const int64_t block_rows = (int64_t{a.rows} + b - 1) / b;
  int64_t blocks = 0;
#pragma omp parallel reduction(+ : blocks) if (detail::parallel_worth(a.rows + a.nnz()))
  {
    std::vector<int32_t> block_cols;
#pragma omp for schedule(dynamic, 256)
    for (int64_t br = 0; br < block_rows; ++br) {
      const int64_t first = br * b, last = std::min<int64_t>(a.rows, first + b);
      block_cols.clear();
      for (int64_t i = a.row_ptr[first]; i < a.row_ptr[last]; ++i)
        block_cols.push_back(a.col_idx[i] / b);
      std::sort(block_cols.begin(), block_cols.end());
      blocks += std::unique(block_cols.begin(), block_cols.end()) - block_cols.begin();
    }
  }
  return static_cast<double>(a.nnz()) / (static_cast<double>(blocks) * b * b);
}

block_shape detect_block_shape(const csr_matrix& a, int32_t max_size, double min_fill) {
  if (a.nnz() == 0) return {1, 0};
  for (int32_t b = max_size; b >= 2; --b) {
    if (!lengths_divisible(a, b)) continue;
    const double fill = block_fill(a, b);
    if (fill >= min_fill) return {b, fill};
  }
  return {1, 1};
}

}  // namespace sparserl
