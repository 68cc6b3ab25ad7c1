#pragma once
// Helpers shared by the format conversions (not part of the public API): input checks, the
// stored-element limit, and row-range accumulation of sorted COO entries (COO and HYB SpMV).
#include <algorithm>
#include <cstdint>
#include <string>

#include "sparse/csr_matrix.h"
#include "sparse/formats.h"

namespace sparserl::detail {

// Kernels index the padded arrays with 32-bit ints, so no layout may exceed INT32_MAX elements,
// whatever max_elements allows.
inline constexpr int64_t abi_max_elements = INT32_MAX;

// Throws when `elements` (what `format` would store for `shape`) is above either limit.
void check_stored_elements(const char* format, const std::string& shape, int64_t elements,
                           int64_t max_elements);

// "R x C matrix with N nonzeros": the common start of conversion error messages.
std::string describe(const csr_matrix& a);

// Below this much work (rows plus stored elements) a parallel region costs more than it saves,
// and on a loaded machine much more: waiting threads get descheduled.
inline constexpr int64_t parallel_threshold = int64_t{1} << 16;
inline bool parallel_worth(int64_t work) { return work >= parallel_threshold; }

// Rows of output handled by one task in the row-parallel SpMVs: big enough to amortise the
// scheduling, small enough that one long row does not serialise the rest.
inline constexpr int32_t rows_per_task = 512;
inline int64_t row_tasks(int32_t rows) {
  return (int64_t{rows} + rows_per_task - 1) / rows_per_task;
}
inline int32_t task_begin(int64_t task) { return static_cast<int32_t>(task * rows_per_task); }
inline int32_t task_end(int32_t rows, int64_t task) {
  return static_cast<int32_t>(std::min<int64_t>(rows, (task + 1) * rows_per_task));
}

// acc[r - row_begin] += the COO entries of rows [row_begin, row_end), in stored order.
// `first` is the index of the first entry with row >= row_begin (see coo_first_entry).
void coo_add_rows(const coo_matrix& a, const float* x, int64_t first, int32_t row_begin,
                  int32_t row_end, double* acc);
int64_t coo_first_entry(const coo_matrix& a, int32_t row);

// Throws unless the COO arrays agree in size and are sorted by row (the SpMVs rely on it).
void check_coo_shape(const coo_matrix& a, const char* where);

// The first `width` entries of each row as ELL (width <= the longest row): to_ell and HYB's ELL
// part. `format` names the caller in the limit error.
ell_matrix ell_of_row_prefixes(const csr_matrix& a, int32_t width, const char* format,
                               int64_t max_elements);

// acc[r - row_begin] += the ELL entries of rows [row_begin, row_end); padding is skipped.
void ell_add_rows(const ell_matrix& a, const float* x, int32_t row_begin, int32_t row_end,
                  double* acc);
void check_ell_shape(const ell_matrix& a, const char* where);

}  // namespace sparserl::detail
