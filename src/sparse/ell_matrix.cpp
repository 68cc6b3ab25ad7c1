// ELLPACK: every row padded to the longest. Both the conversion and the SpMV walk a block of rows
// slot by slot, so the column-major arrays are read and written contiguously.
#include <algorithm>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"
#include "sparse/formats.h"

namespace sparserl {

namespace detail {

ell_matrix ell_of_row_prefixes(const csr_matrix& a, int32_t width, const char* format,
                               int64_t max_elements) {
  ell_matrix out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.width = width;
  const int64_t elements = int64_t{a.rows} * width;
  check_stored_elements(format, describe(a) + " in ELL of width " + std::to_string(width), elements,
                        max_elements);
  out.col_idx.resize(static_cast<size_t>(elements));
  out.values.resize(static_cast<size_t>(elements));
  const int64_t tasks = row_tasks(a.rows);
#pragma omp parallel for schedule(dynamic, 1) if (detail::parallel_worth(a.rows + elements))
  for (int64_t t = 0; t < tasks; ++t) {
    const int32_t begin = task_begin(t), end = task_end(a.rows, t);
    for (int32_t j = 0; j < width; ++j) {
      const int64_t base = int64_t{j} * a.rows;
      for (int32_t r = begin; r < end; ++r) {
        const bool real = j < a.row_length(r);
        out.col_idx[base + r] = real ? a.col_idx[a.row_ptr[r] + j] : -1;
        out.values[base + r] = real ? a.values[a.row_ptr[r] + j] : 0.0f;
      }
    }
  }
  return out;
}

void check_ell_shape(const ell_matrix& a, const char* where) {
  if (a.rows < 0 || a.cols < 0 || a.width < 0)
    throw error(std::string(where) + ": negative ELL dimensions");
  const auto expected = static_cast<size_t>(int64_t{a.rows} * a.width);
  if (a.col_idx.size() != expected || a.values.size() != expected)
    throw error(std::string(where) + ": ELL arrays hold " + std::to_string(a.col_idx.size()) +
                " / " + std::to_string(a.values.size()) +
                " elements, expected rows * width = " + std::to_string(expected));
}

void ell_add_rows(const ell_matrix& a, const float* x, int32_t row_begin, int32_t row_end,
                  double* acc) {
  for (int32_t j = 0; j < a.width; ++j) {
    const int64_t base = int64_t{j} * a.rows;
    for (int32_t r = row_begin; r < row_end; ++r) {
      const int32_t col = a.col_idx[base + r];
      if (col >= 0)
        acc[r - row_begin] += static_cast<double>(a.values[base + r]) * static_cast<double>(x[col]);
    }
  }
}

}  // namespace detail

ell_matrix to_ell(const csr_matrix& a, int64_t max_elements) {
  validate_csr(a);
  return detail::ell_of_row_prefixes(a, max_row_length(a), "ELL", max_elements);
}

void spmv(const ell_matrix& a, const float* x, float* y) {
  detail::check_ell_shape(a, "ELL spmv");
  const int64_t tasks = detail::row_tasks(a.rows);
#pragma omp parallel for schedule( \
    dynamic, 1) if (detail::parallel_worth(a.rows + int64_t{a.rows} * a.width))
  for (int64_t t = 0; t < tasks; ++t) {
    const int32_t begin = detail::task_begin(t), end = detail::task_end(a.rows, t);
    double acc[detail::rows_per_task] = {};
    detail::ell_add_rows(a, x, begin, end, acc);
    for (int32_t r = begin; r < end; ++r) y[r] = static_cast<float>(acc[r - begin]);
  }
}

}  // namespace sparserl
