#pragma once
// Every storage format the kernel ABI knows, converted from CSR, each with a CPU SpMV that must
// equal spmv_reference (tests/sparse/test_formats.cpp). Layouts are the ABI: docs/kernel-abi.md.
// Conversions validate the CSR input and keep explicit zeros as structure. No layout stores more
// than 2^31 - 1 elements whatever max_elements says, since kernels index it with int.
#include <cstdint>
#include <vector>

#include "sparse/csr_matrix.h"

namespace sparserl {

// Conversions refuse (sparserl::error) to build a padded format larger than this many stored
// elements, so an ELL of a matrix with one dense row cannot exhaust memory.
inline constexpr int64_t default_max_padded_elements = int64_t{1} << 31;

// Coordinate list sorted by (row, col): the CSR entries in CSR order.
struct coo_matrix {
  int32_t rows = 0, cols = 0;
  std::vector<int32_t> row_idx, col_idx;
  std::vector<float> values;
  int64_t nnz() const { return static_cast<int64_t>(values.size()); }
};

// ELLPACK, column-major: slot j of row r is at [j * rows + r]. Padding has col -1 and value 0.
// width = the longest row; a row's entries fill its first slots in column order.
struct ell_matrix {
  int32_t rows = 0, cols = 0, width = 0;
  std::vector<int32_t> col_idx;
  std::vector<float> values;
};

// SELL-C-sigma: rows sorted by length (descending) inside windows of sigma rows, grouped into
// slices of C rows; slice s holds slice_width[s] columns, column-major inside the slice:
// element j of the row at lane l of slice s is at [slice_ptr[s] + j * C + l].
// perm[i] is the original row of sorted position i (i < rows); lanes past rows are padding.
// Padding has col -1 and value 0.
// Windows are [w * sigma, (w + 1) * sigma) of the original rows, with sigma used as given (not
// rounded to a multiple of C: then a slice may straddle two windows, which stays valid). The sort
// is stable, so sigma = 1 keeps the original order (perm is the identity) and sigma >= rows sorts
// the whole matrix. slice_width[s] is the longest row in slice s (0 for an empty slice).
// C must be a power of two in [1, 1024] and sigma >= 1.
struct sell_matrix {
  int32_t rows = 0, cols = 0, C = 32, sigma = 1, num_slices = 0;
  std::vector<int32_t> slice_ptr;    // num_slices + 1 element offsets
  std::vector<int32_t> slice_width;  // num_slices
  std::vector<int32_t> perm;         // rows
  std::vector<int32_t> col_idx;
  std::vector<float> values;
};

// Block sparse row with r x c dense blocks, each stored row-major; block_rows = ceil(rows / r).
// Blocks on the last block row/column may extend past the matrix; those cells hold 0.
// block_cols = ceil(cols / c); block columns ascend within a block row; only blocks holding at
// least one CSR entry are stored; cell (i, j) of block b is values[b * r * c + i * c + j].
// r and c must lie in [1, 64].
struct bsr_matrix {
  int32_t rows = 0, cols = 0, r = 1, c = 1, block_rows = 0, block_cols = 0;
  std::vector<int32_t> block_row_ptr;  // block_rows + 1
  std::vector<int32_t> block_col_idx;  // block column of each block
  std::vector<float> values;           // nnz_blocks * r * c
  int64_t nnz_blocks() const { return static_cast<int64_t>(block_col_idx.size()); }
};

// Diagonal storage: offsets[d] = col - row of diagonal d (ascending); values column-major by
// diagonal: A[r][r + offsets[d]] is at [d * rows + r]; cells outside the matrix hold 0.
// One diagonal per distinct col - row of the CSR entries.
struct dia_matrix {
  int32_t rows = 0, cols = 0, num_diags = 0;
  std::vector<int32_t> offsets;
  std::vector<float> values;
};

// Hybrid: the first `ell.width` entries of each row in ELL, the rest in COO (sorted by
// (row, col)). ell.width = min(requested width, longest row); the width must be >= 0.
struct hyb_matrix {
  ell_matrix ell;
  coo_matrix coo;
};

// CSR with 16-bit column indices: each row stores its first column as a 32-bit col_base and
// every entry's column as a 16-bit offset from it (col = col_base[row] + col_offset[e]), so an
// entry costs 6 bytes instead of 8. row_ptr and values are CSR's; col_base is 0 for an empty row.
// Only matrices whose every row spans at most max_col_offset columns (last - first) fit:
// to_csr16 refuses the others (sparserl::error naming the first row that does not fit).
struct csr16_matrix {
  static constexpr int32_t max_col_offset = 65535;
  int32_t rows = 0, cols = 0;
  std::vector<int32_t> row_ptr{0};   // rows + 1
  std::vector<int32_t> col_base;     // rows
  std::vector<uint16_t> col_offset;  // nnz
  std::vector<float> values;         // nnz
  int64_t nnz() const { return static_cast<int64_t>(values.size()); }
};

// Hub COO: COO (sorted by (row, column), CSR order) whose entries in the `hubs` most referenced
// columns store ~slot (a negative number) instead of the column: hub_cols[slot] is the column.
// Hub slots go to the columns with the most entries, ties by lower column; columns without
// entries never become hubs, so hub_cols may be shorter than asked. A kernel gathers the hubs'
// x once (work[slot] = x[hub_cols[slot]]) and reads hub entries from a block's shared copy.
struct hub_coo_matrix {
  static constexpr int32_t max_hubs = 49152;  // 192 KiB of shared memory as floats
  coo_matrix coo;                             // coo.col_idx < 0: hub slot ~col_idx
  std::vector<int32_t> hub_cols;
  int64_t nnz() const { return coo.nnz(); }
};

// Reordered CSR: the square matrix renumbered symmetrically, B = P A P^T, by reverse
// Cuthill-McKee (sparse/node_order.h, pattern taken as A + A^T), stored as CSR. perm[p] is the
// original row (and column) at new position p; row p of B is original row perm[p] with its
// columns renumbered to new positions, ascending. A kernel gathers x into the new numbering
// (work[p] = x[perm[p]]), multiplies by B with local accesses and writes y[perm[p]]. to_rcsr
// refuses a non-square matrix (sparserl::error): a symmetric renumbering needs one.
struct rcsr_matrix {
  int32_t rows = 0, cols = 0;       // of A (and B): rows == cols
  std::vector<int32_t> perm;        // rows: original index at each new position
  std::vector<int32_t> row_ptr{0};  // rows + 1, of B
  std::vector<int32_t> col_idx;     // nnz: new positions, ascending within a row
  std::vector<float> values;        // nnz
  int64_t nnz() const { return static_cast<int64_t>(values.size()); }
};

coo_matrix to_coo(const csr_matrix& a);
// Throws when hubs is outside [0, hub_coo_matrix::max_hubs].
hub_coo_matrix to_hub_coo(const csr_matrix& a, int32_t hubs);
// The CSR matrix an HCOO layout holds (to_csr(to_hub_coo(a, h)) == a).
csr_matrix to_csr(const hub_coo_matrix& a);
ell_matrix to_ell(const csr_matrix& a, int64_t max_elements = default_max_padded_elements);
sell_matrix to_sell(const csr_matrix& a, int32_t C, int32_t sigma,
                    int64_t max_elements = default_max_padded_elements);
bsr_matrix to_bsr(const csr_matrix& a, int32_t r, int32_t c,
                  int64_t max_elements = default_max_padded_elements);
dia_matrix to_dia(const csr_matrix& a, int64_t max_elements = default_max_padded_elements);
hyb_matrix to_hyb(const csr_matrix& a, int32_t width,
                  int64_t max_elements = default_max_padded_elements);
csr16_matrix to_csr16(const csr_matrix& a);
// The CSR matrix a CSR16 layout holds (to_csr(to_csr16(a)) == a).
csr_matrix to_csr(const csr16_matrix& a);
// The widest column span of a row (last column - first column; 0 for rows of 0 or 1 entries):
// CSR16 holds the matrix when this is at most csr16_matrix::max_col_offset.
int64_t max_row_span(const csr_matrix& a);
rcsr_matrix to_rcsr(const csr_matrix& a);
// B = P A P^T for a permutation `perm` (perm[p] = original index at new position p), with the
// other RCSR arrays; to_rcsr is this with the RCM order. Throws on a non-square matrix or a perm
// that is not a permutation of 0..rows-1.
rcsr_matrix to_rcsr(const csr_matrix& a, std::vector<int32_t> perm);
// The CSR matrix an RCSR layout holds, in the original numbering (to_csr(to_rcsr(a)) == a).
csr_matrix to_csr(const rcsr_matrix& a);
// The HYB width the ABI uses for width 0 (and `matrix convert` by default): the
// ceil(rows / 3)-th longest row, capped so the ELL part stays within max_elements.
int32_t automatic_hyb_width(const csr_matrix& a,
                            int64_t max_elements = default_max_padded_elements);

// CPU SpMV of each layout (float in/out, double accumulation), for checking the conversions.
// They check the array sizes (sparserl::error) but trust the indices, as from the to_* above.
void spmv(const coo_matrix& a, const float* x, float* y);
void spmv(const ell_matrix& a, const float* x, float* y);
void spmv(const sell_matrix& a, const float* x, float* y);
void spmv(const bsr_matrix& a, const float* x, float* y);
void spmv(const dia_matrix& a, const float* x, float* y);
void spmv(const hyb_matrix& a, const float* x, float* y);
void spmv(const csr16_matrix& a, const float* x, float* y);
void spmv(const rcsr_matrix& a, const float* x, float* y);
void spmv(const hub_coo_matrix& a, const float* x, float* y);

}  // namespace sparserl
