// COO: the CSR entries with explicit row indices. The SpMV is parallel over ranges of rows
// (entries are sorted by row), so every output element has exactly one writer.
#include <algorithm>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"
#include "sparse/formats.h"

namespace sparserl {

namespace detail {

void check_coo_shape(const coo_matrix& a, const char* where) {
  if (a.rows < 0 || a.cols < 0) throw error(std::string(where) + ": negative COO dimensions");
  if (a.row_idx.size() != a.values.size() || a.col_idx.size() != a.values.size())
    throw error(std::string(where) + ": COO arrays differ in length (" +
                std::to_string(a.row_idx.size()) + " rows, " + std::to_string(a.col_idx.size()) +
                " cols, " + std::to_string(a.values.size()) + " values)");
  if (!std::is_sorted(a.row_idx.begin(), a.row_idx.end()))
    throw error(std::string(where) + ": COO entries are not sorted by row");
  if (!a.row_idx.empty() && (a.row_idx.front() < 0 || a.row_idx.back() >= a.rows))
    throw error(std::string(where) + ": COO row index outside [0, " + std::to_string(a.rows) + ")");
}

int64_t coo_first_entry(const coo_matrix& a, int32_t row) {
  return std::lower_bound(a.row_idx.begin(), a.row_idx.end(), row) - a.row_idx.begin();
}

void coo_add_rows(const coo_matrix& a, const float* x, int64_t first, int32_t row_begin,
                  int32_t row_end, double* acc) {
  const int64_t n = a.nnz();
  for (int64_t i = first; i < n && a.row_idx[i] < row_end; ++i)
    acc[a.row_idx[i] - row_begin] +=
        static_cast<double>(a.values[i]) * static_cast<double>(x[a.col_idx[i]]);
}

}  // namespace detail

coo_matrix to_coo(const csr_matrix& a) {
  validate_csr(a);
  coo_matrix out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.col_idx = a.col_idx;
  out.values = a.values;
  out.row_idx.resize(a.col_idx.size());
#pragma omp parallel for schedule( \
    dynamic, detail::rows_per_task) if (detail::parallel_worth(a.rows + a.nnz()))
  for (int32_t r = 0; r < a.rows; ++r)
    std::fill(out.row_idx.begin() + a.row_ptr[r], out.row_idx.begin() + a.row_ptr[r + 1], r);
  return out;
}

void spmv(const coo_matrix& a, const float* x, float* y) {
  detail::check_coo_shape(a, "COO spmv");
  const int64_t tasks = detail::row_tasks(a.rows);
#pragma omp parallel for schedule(dynamic, 1) if (detail::parallel_worth(a.rows + a.nnz()))
  for (int64_t t = 0; t < tasks; ++t) {
    const int32_t begin = detail::task_begin(t), end = detail::task_end(a.rows, t);
    double acc[detail::rows_per_task] = {};
    detail::coo_add_rows(a, x, detail::coo_first_entry(a, begin), begin, end, acc);
    for (int32_t r = begin; r < end; ++r) y[r] = static_cast<float>(acc[r - begin]);
  }
}

}  // namespace sparserl
