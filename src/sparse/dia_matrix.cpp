// Diagonal storage: one dense lane of `rows` cells per distinct col - row offset.
#include <algorithm>
#include <cstdio>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"
#include "sparse/formats.h"

namespace sparserl {

namespace {

// The distinct col - row offsets, ascending. A presence map over the rows + cols - 1 possible
// offsets is linear, but for very wide or tall matrices it can dwarf the matrix itself; then
// sorting the offsets of the nonzeros costs less memory.
std::vector<int32_t> distinct_offsets(const csr_matrix& a) {
  const int64_t span = a.rows == 0 || a.cols == 0 ? 0 : int64_t{a.rows} + a.cols - 1;
  std::vector<int32_t> offsets;
  if (span <= 4 * (a.nnz() + a.rows) + 1024) {
    std::vector<uint8_t> present(static_cast<size_t>(span), 0);
#pragma omp parallel for schedule( \
    dynamic, detail::rows_per_task) if (detail::parallel_worth(a.rows + a.nnz()))
    for (int32_t r = 0; r < a.rows; ++r)
      for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) {
        uint8_t& slot = present[int64_t{a.col_idx[i]} - r + a.rows - 1];
#pragma omp atomic write
        slot = 1;  // several rows may mark the same diagonal
      }
    for (int64_t k = 0; k < span; ++k)
      if (present[k]) offsets.push_back(static_cast<int32_t>(k - (a.rows - 1)));
    return offsets;
  }
  offsets.reserve(a.col_idx.size());
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) offsets.push_back(a.col_idx[i] - r);
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  return offsets;
}

void check_dia_shape(const dia_matrix& a) {
  auto fail = [](const std::string& why) { throw error("DIA spmv: " + why); };
  if (a.rows < 0 || a.cols < 0) fail("negative dimensions");
  if (a.offsets.size() != static_cast<size_t>(a.num_diags)) fail("offsets.size() != num_diags");
  if (a.values.size() != static_cast<size_t>(int64_t{a.num_diags} * a.rows))
    fail("values.size() != num_diags * rows");
}

}  // namespace

dia_matrix to_dia(const csr_matrix& a, int64_t max_elements) {
  validate_csr(a);
  dia_matrix out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.offsets = distinct_offsets(a);
  out.num_diags = static_cast<int32_t>(out.offsets.size());
  const int64_t elements = int64_t{out.num_diags} * a.rows;
  // Fill = stored cells per nonzero: how much of the layout is padding.
  char fill[32];
  std::snprintf(fill, sizeof fill, "%.2f", a.nnz() == 0 ? 0.0 : double(elements) / a.nnz());
  detail::check_stored_elements("DIA",
                                detail::describe(a) + " on " + std::to_string(out.num_diags) +
                                    " diagonals (fill " + fill + "x)",
                                elements, max_elements);
  out.values.assign(static_cast<size_t>(elements), 0.0f);
#pragma omp parallel for schedule( \
    dynamic, detail::rows_per_task) if (detail::parallel_worth(a.rows + a.nnz()))
  for (int32_t r = 0; r < a.rows; ++r) {
    auto d = out.offsets.begin();  // the row's offsets ascend with its columns
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) {
      d = std::lower_bound(d, out.offsets.end(), a.col_idx[i] - r);
      out.values[(d - out.offsets.begin()) * int64_t{a.rows} + r] = a.values[i];
    }
  }
  return out;
}

void spmv(const dia_matrix& a, const float* x, float* y) {
  check_dia_shape(a);
  const int64_t tasks = detail::row_tasks(a.rows);
#pragma omp parallel for schedule( \
    dynamic, 1) if (detail::parallel_worth(a.rows + static_cast <int64_t>(a.values.size())))
  for (int64_t t = 0; t < tasks; ++t) {
    const int32_t begin = detail::task_begin(t), end = detail::task_end(a.rows, t);
    double acc[detail::rows_per_task] = {};
    for (int32_t d = 0; d < a.num_diags; ++d) {
      const int64_t off = a.offsets[d];
      // Rows whose cell on this diagonal lies inside the matrix: 0 <= r + off < cols.
      const int64_t lo = std::max<int64_t>(begin, -off);
      const int64_t hi = std::min<int64_t>(end, int64_t{a.cols} - off);
      const float* lane = a.values.data() + int64_t{d} * a.rows;
      for (int64_t r = lo; r < hi; ++r)
        acc[r - begin] += static_cast<double>(lane[r]) * static_cast<double>(x[r + off]);
    }
    for (int32_t r = begin; r < end; ++r) y[r] = static_cast<float>(acc[r - begin]);
  }
}

}  // namespace sparserl
