#pragma once
// Matrix Market (.mtx, .mtx.gz) coordinate files: real / integer / pattern, general / symmetric /
// skew-symmetric (expanded to both triangles on read). Duplicate entries are summed.
#include <cstdint>
#include <string>

#include "sparse/csr_matrix.h"

namespace sparserl {

struct mtx_read_options {
  // Refuse files whose declared size would need more memory than this (bytes of CSR + triplets).
  int64_t max_bytes = int64_t{16} << 30;
  // NaN / Inf values are an error unless this is set.
  bool allow_nonfinite = false;
};

// Throws sparserl::error "<path>:<line>: <why>" on any malformed input.
csr_matrix read_matrix_market(const std::string& path, const mtx_read_options& options = {});
// Parses from memory; `name` is used in error messages in place of a path.
csr_matrix parse_matrix_market(const char* data, size_t size, const std::string& name,
                               const mtx_read_options& options = {});

// Writes "coordinate real general" (gzip when path ends in .gz) through a temp file + rename.
void write_matrix_market(const std::string& path, const csr_matrix& matrix);

}  // namespace sparserl
