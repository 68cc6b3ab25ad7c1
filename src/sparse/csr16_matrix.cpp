// CSR16: CSR whose column indices are 16-bit offsets from each row's first column. On matrices
// whose rows are local (meshes, FEM and banded matrices in a natural or bandwidth-reducing order)
// it moves 6 instead of 8 bytes per nonzero; rows spanning more than 65535 columns cannot be
// stored, and the conversion refuses them rather than wrap.
#include <algorithm>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"
#include "sparse/formats.h"

namespace sparserl {

int64_t max_row_span(const csr_matrix& a) {
  int64_t widest = 0;
  for (int32_t r = 0; r < a.rows; ++r)
    if (a.row_length(r) > 1)
      widest = std::max<int64_t>(
          widest, int64_t{a.col_idx[a.row_ptr[r + 1] - 1]} - a.col_idx[a.row_ptr[r]]);
  return widest;
}

csr16_matrix to_csr16(const csr_matrix& a) {
  validate_csr(a);
  csr16_matrix m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.row_ptr = a.row_ptr;
  m.values = a.values;
  m.col_base.assign(static_cast<size_t>(a.rows), 0);
  m.col_offset.resize(a.col_idx.size());
  for (int32_t r = 0; r < a.rows; ++r) {
    const int32_t begin = a.row_ptr[r], end = a.row_ptr[r + 1];
    if (begin == end) continue;
    const int32_t base = a.col_idx[begin];
    const int64_t span = int64_t{a.col_idx[end - 1]} - base;
    if (span > csr16_matrix::max_col_offset)
      throw error("CSR16: row " + std::to_string(r) + " spans columns " + std::to_string(base) +
                  ".." + std::to_string(a.col_idx[end - 1]) + ", " + std::to_string(span) +
                  " apart; a 16-bit column offset holds at most " +
                  std::to_string(csr16_matrix::max_col_offset) + " (" + detail::describe(a) +
                  "; use CSR, or a bandwidth-reducing order)");
    m.col_base[r] = base;
    for (int32_t i = begin; i < end; ++i)
      m.col_offset[i] = static_cast<uint16_t>(a.col_idx[i] - base);
  }
  return m;
}

namespace {

void check_csr16_shape(const csr16_matrix& a, const char* what) {
  const bool ok =
      a.rows >= 0 && a.cols >= 0 && a.row_ptr.size() == static_cast<size_t>(a.rows) + 1 &&
      a.col_base.size() == static_cast<size_t>(a.rows) && a.col_offset.size() == a.values.size() &&
      !a.row_ptr.empty() && a.row_ptr.back() == static_cast<int64_t>(a.values.size());
  if (!ok) throw error(std::string(what) + ": inconsistent CSR16 array sizes");
}

}  // namespace

csr_matrix to_csr(const csr16_matrix& a) {
  check_csr16_shape(a, "CSR16 to CSR");
  csr_matrix m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.row_ptr = a.row_ptr;
  m.values = a.values;
  m.col_idx.resize(a.values.size());
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i)
      m.col_idx[i] = a.col_base[r] + a.col_offset[i];
  validate_csr(m);
  return m;
}

void spmv(const csr16_matrix& a, const float* x, float* y) {
  check_csr16_shape(a, "CSR16 spmv");
#pragma omp parallel for schedule( \
    dynamic, detail::rows_per_task) if (detail::parallel_worth(a.rows + a.nnz()))
  for (int32_t r = 0; r < a.rows; ++r) {
    double acc = 0;
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i)
      acc += static_cast<double>(a.values[i]) * x[a.col_base[r] + a.col_offset[i]];
    y[r] = static_cast<float>(acc);
  }
}

}  // namespace sparserl
