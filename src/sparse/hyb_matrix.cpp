// HYB (Bell & Garland 2009): a narrow ELL for the regular part of every row plus COO for the
// overflow of long rows, so one long row no longer pads all the others.
#include <algorithm>
#include <functional>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"
#include "sparse/formats.h"

namespace sparserl {

namespace {

// Entries past the first `width` of each row, in CSR order, i.e. sorted by (row, col).
coo_matrix coo_part(const csr_matrix& a, int32_t width) {
  coo_matrix coo;
  coo.rows = a.rows;
  coo.cols = a.cols;
  std::vector<int32_t> start(static_cast<size_t>(a.rows) + 1, 0);
  for (int32_t r = 0; r < a.rows; ++r)
    start[r + 1] = start[r] + std::max(0, a.row_length(r) - width);
  coo.row_idx.resize(static_cast<size_t>(start.back()));
  coo.col_idx.resize(static_cast<size_t>(start.back()));
  coo.values.resize(static_cast<size_t>(start.back()));
#pragma omp parallel for schedule( \
    dynamic, detail::rows_per_task) if (detail::parallel_worth(a.rows + a.nnz()))
  for (int32_t r = 0; r < a.rows; ++r) {
    const int32_t skip = a.row_length(r) - (start[r + 1] - start[r]);
    for (int32_t k = start[r]; k < start[r + 1]; ++k) {
      const int32_t i = a.row_ptr[r] + skip + (k - start[r]);
      coo.row_idx[k] = r;
      coo.col_idx[k] = a.col_idx[i];
      coo.values[k] = a.values[i];
    }
  }
  return coo;
}

}  // namespace

hyb_matrix to_hyb(const csr_matrix& a, int32_t width, int64_t max_elements) {
  if (width < 0) throw error("HYB: ELL width = " + std::to_string(width) + " must be >= 0");
  validate_csr(a);
  hyb_matrix out;
  out.ell = detail::ell_of_row_prefixes(a, std::min(width, max_row_length(a)), "HYB", max_elements);
  out.coo = coo_part(a, out.ell.width);
  return out;
}

void spmv(const hyb_matrix& a, const float* x, float* y) {
  detail::check_ell_shape(a.ell, "HYB spmv");
  detail::check_coo_shape(a.coo, "HYB spmv");
  if (a.ell.rows != a.coo.rows || a.ell.cols != a.coo.cols)
    throw error("HYB spmv: the ELL part is " + std::to_string(a.ell.rows) + " x " +
                std::to_string(a.ell.cols) + " but the COO part " + std::to_string(a.coo.rows) +
                " x " + std::to_string(a.coo.cols));
  const int32_t rows = a.ell.rows;
  const int64_t tasks = detail::row_tasks(rows);
#pragma omp parallel for schedule(                                                             \
    dynamic, 1) if (detail::parallel_worth(rows + static_cast <int64_t>(a.ell.values.size()) + \
                                           a.coo.nnz()))
  for (int64_t t = 0; t < tasks; ++t) {
    const int32_t begin = detail::task_begin(t), end = detail::task_end(rows, t);
    double acc[detail::rows_per_task] = {};  // ELL then COO: each row in column order, as CSR
    detail::ell_add_rows(a.ell, x, begin, end, acc);
    detail::coo_add_rows(a.coo, x, detail::coo_first_entry(a.coo, begin), begin, end, acc);
    for (int32_t r = begin; r < end; ++r) y[r] = static_cast<float>(acc[r - begin]);
  }
}

// The ceil(rows / 3)-th longest row, so every ELL slot column up to the width is filled in at
// least a third of the rows (the ELL part stays dense; longer rows go to COO).
int32_t automatic_hyb_width(const csr_matrix& a, int64_t max_elements) {
  if (a.rows == 0) return 0;
  std::vector<int32_t> lengths(static_cast<size_t>(a.rows));
  for (int32_t r = 0; r < a.rows; ++r) lengths[r] = a.row_length(r);
  const size_t at = (static_cast<size_t>(a.rows) + 2) / 3 - 1;
  std::nth_element(lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(at),
                   lengths.end(), std::greater<int32_t>());
  const int64_t width = std::min<int64_t>(lengths[at], max_elements / a.rows);
  return static_cast<int32_t>(width);
}

}  // namespace sparserl
