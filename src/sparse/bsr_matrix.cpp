// Block sparse row. Block row br covers CSR rows [br * r, br * r + r), whose entries are one
// contiguous range of the CSR arrays; that range doubles as scratch for its block columns.
#include <algorithm>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"
#include "sparse/formats.h"

namespace sparserl {

namespace {

constexpr int32_t max_block_side = 64;

void check_bsr_params(int32_t r, int32_t c) {
  if (r < 1 || r > max_block_side || c < 1 || c > max_block_side)
    throw error("BSR: block " + std::to_string(r) + " x " + std::to_string(c) +
                " must have both sides in [1, " + std::to_string(max_block_side) + "]");
}

struct entry_range {
  int32_t begin, end;
};

entry_range block_row_entries(const csr_matrix& a, int32_t r, int32_t br) {
  const int64_t first_row = int64_t{br} * r;
  const int64_t last_row = std::min<int64_t>(a.rows, first_row + r);
  return {a.row_ptr[first_row], a.row_ptr[last_row]};
}

// Writes the distinct block columns of block row br, ascending, to scratch[begin, begin + n)
// and returns n.
int32_t collect_block_columns(const csr_matrix& a, int32_t r, int32_t c, int32_t br,
                              std::vector<int32_t>& scratch) {
  const entry_range e = block_row_entries(a, r, br);
  auto first = scratch.begin() + e.begin, last = scratch.begin() + e.end;
  std::transform(a.col_idx.begin() + e.begin, a.col_idx.begin() + e.end, first,
                 [c](int32_t col) { return col / c; });
  if (!std::is_sorted(first, last)) std::sort(first, last);  // r == 1 is already sorted
  return static_cast<int32_t>(std::unique(first, last) - first);
}

// Scatters the entries of block row br into its blocks (block columns already in place).
void fill_block_row(const csr_matrix& a, bsr_matrix& out, int32_t br) {
  const int32_t first_block = out.block_row_ptr[br], end_block = out.block_row_ptr[br + 1];
  const int64_t block_size = int64_t{out.r} * out.c;
  const int32_t row_end =
      static_cast<int32_t>(std::min<int64_t>(a.rows, int64_t{br} * out.r + out.r));
  for (int32_t row = br * out.r; row < row_end; ++row) {
    int32_t b = first_block;  // both the row's columns and the block columns ascend
    for (int32_t i = a.row_ptr[row]; i < a.row_ptr[row + 1]; ++i) {
      const int32_t bc = a.col_idx[i] / out.c;
      while (b < end_block && out.block_col_idx[b] < bc) ++b;
      const int64_t cell = (row - int64_t{br} * out.r) * out.c + a.col_idx[i] % out.c;
      out.values[b * block_size + cell] = a.values[i];
    }
  }
}

void check_bsr_shape(const bsr_matrix& a) {
  auto fail = [](const std::string& why) { throw error("BSR spmv: " + why); };
  if (a.rows < 0 || a.cols < 0) fail("negative dimensions");
  if (a.r < 1 || a.r > max_block_side || a.c < 1 || a.c > max_block_side)
    fail("block sides outside [1, " + std::to_string(max_block_side) + "]");
  if (a.block_rows != (int64_t{a.rows} + a.r - 1) / a.r) fail("block_rows != ceil(rows / r)");
  if (a.block_row_ptr.size() != static_cast<size_t>(a.block_rows) + 1 ||
      a.block_row_ptr.front() != 0 ||
      static_cast<size_t>(a.block_row_ptr.back()) != a.block_col_idx.size())
    fail("block_row_ptr does not span block_col_idx");
  if (a.values.size() != a.block_col_idx.size() * static_cast<size_t>(a.r * a.c))
    fail("values does not hold r * c elements per block");
}

}  // namespace

bsr_matrix to_bsr(const csr_matrix& a, int32_t r, int32_t c, int64_t max_elements) {
  check_bsr_params(r, c);
  validate_csr(a);
  bsr_matrix out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.r = r;
  out.c = c;
  out.block_rows = static_cast<int32_t>((int64_t{a.rows} + r - 1) / r);
  out.block_cols = static_cast<int32_t>((int64_t{a.cols} + c - 1) / c);
  std::vector<int32_t> scratch(a.col_idx.size());
  out.block_row_ptr.assign(static_cast<size_t>(out.block_rows) + 1, 0);
#pragma omp parallel for schedule(dynamic, 64) if (detail::parallel_worth(a.rows + a.nnz()))
  for (int32_t br = 0; br < out.block_rows; ++br)
    out.block_row_ptr[br + 1] = collect_block_columns(a, r, c, br, scratch);
  for (int32_t br = 0; br < out.block_rows; ++br)
    out.block_row_ptr[br + 1] += out.block_row_ptr[br];
  const int64_t elements = int64_t{out.block_row_ptr.back()} * r * c;
  detail::check_stored_elements("BSR",
                                detail::describe(a) + " in " +
                                    std::to_string(out.block_row_ptr.back()) + " blocks of " +
                                    std::to_string(r) + " x " + std::to_string(c),
                                elements, max_elements);
  out.block_col_idx.resize(static_cast<size_t>(out.block_row_ptr.back()));
  out.values.assign(static_cast<size_t>(elements), 0.0f);
#pragma omp parallel for schedule(dynamic, 64) if (detail::parallel_worth(a.rows + a.nnz()))
  for (int32_t br = 0; br < out.block_rows; ++br) {
    const int32_t from = block_row_entries(a, r, br).begin;
    const int32_t n = out.block_row_ptr[br + 1] - out.block_row_ptr[br];
    std::copy_n(scratch.begin() + from, n, out.block_col_idx.begin() + out.block_row_ptr[br]);
    fill_block_row(a, out, br);
  }
  return out;
}

void spmv(const bsr_matrix& a, const float* x, float* y) {
  check_bsr_shape(a);
  const int64_t block_size = int64_t{a.r} * a.c;
#pragma omp parallel for schedule( \
    dynamic, 64) if (detail::parallel_worth(a.rows + static_cast <int64_t>(a.values.size())))
  for (int32_t br = 0; br < a.block_rows; ++br) {
    double acc[max_block_side] = {};
    for (int32_t b = a.block_row_ptr[br]; b < a.block_row_ptr[br + 1]; ++b) {
      const float* block = a.values.data() + b * block_size;
      const int64_t col0 = int64_t{a.block_col_idx[b]} * a.c;
      const int32_t width = static_cast<int32_t>(std::min<int64_t>(a.c, a.cols - col0));
      for (int32_t i = 0; i < a.r; ++i)
        for (int32_t j = 0; j < width; ++j)
          acc[i] += static_cast<double>(block[i * a.c + j]) * static_cast<double>(x[col0 + j]);
    }
    const int64_t row0 = int64_t{br} * a.r;
    const int32_t height = static_cast<int32_t>(std::min<int64_t>(a.r, a.rows - row0));
    for (int32_t i = 0; i < height; ++i) y[row0 + i] = static_cast<float>(acc[i]);
  }
}

}  // namespace sparserl
