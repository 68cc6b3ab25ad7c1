#pragma once
// Matrix Market (.mtx, .mtx.gz) coordinate files: real / integer / pattern, general / symmetric /
// skew-symmetric (expanded to both triangles on read). Duplicate entries are summed.
//
// Reading: the banner `%%MatrixMarket matrix coordinate <field> <symmetry>` is matched
// case-insensitively; array format, complex and hermitian are refused. Comment (%) and blank
// lines may appear anywhere after the banner, CRLF line endings and trailing blanks are fine.
// Symmetric files are mirrored as given (an off-diagonal entry (i, j) also yields (j, i); a file
// holding both triangles therefore has them summed); skew-symmetric mirrors with the value
// negated and refuses diagonal entries; a pattern file's nonzeros (duplicates counted once) get
// the values of sparse/pattern_values.h, not 1.0, so a kernel that ignores values cannot pass.
// Values are parsed straight to
// float (correctly rounded); values too small for float become 0, too large
// ones Inf (refused unless allow_nonfinite).
// gzip is recognised by its magic bytes, not by the name; the whole (decompressed) file is read
// into memory and the entries are scanned in parallel (OpenMP) over line-aligned chunks.
// Errors say "<path>:<line>: <why>", lines 1-based with the banner as line 1; a failure to read
// the file at all says "<path>: <why>".
#include <cstdint>
#include <string>

#include "sparse/csr_matrix.h"

namespace sparserl {

struct mtx_read_options {
  // Refuse files whose declared size would need more memory than this (bytes of CSR + triplets).
  // read_matrix_market also refuses (decompressed) file contents longer than this.
  int64_t max_bytes = int64_t{16} << 30;
  // NaN / Inf values are an error unless this is set.
  bool allow_nonfinite = false;
};

// Throws sparserl::error "<path>:<line>: <why>" on any malformed input.
csr_matrix read_matrix_market(const std::string& path, const mtx_read_options& options = {});
// Parses from memory; `name` is used in error messages in place of a path.
csr_matrix parse_matrix_market(const char* data, size_t size, const std::string& name,
                               const mtx_read_options& options = {});

// Writes "coordinate real general" (gzip when path ends in .gz) through a temp file + rename, so
// `path` holds either its old contents or the whole new file. Values use the shortest form that
// reads back to the same float. Throws sparserl::error "<path>: <why>" (errno's reason).
void write_matrix_market(const std::string& path, const csr_matrix& matrix);

}  // namespace sparserl
