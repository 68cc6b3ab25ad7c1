// Merge-path CSR SpMV (after Merrill & Garland, "Merge-based parallel sparse matrix-vector
// multiplication", SC'16), in one kernel that writes every y element exactly once.
//
// The CSR ABI has a single entry point and y is poisoned, so partial sums of a row split across
// blocks cannot be combined with atomics (nothing ordered the first write). Hence two levels:
//  - Blocks: the merge path of (row ends, nonzeros) is cut into gridDim.x equal diagonals, and
//    block b owns the rows whose END falls into its cut, whole (also the nonzeros of its first
//    row that lie before the cut). Rows are never shared between blocks.
//  - Threads: the block's own rows + nonzeros are cut again into equal shares, one per thread.
//    A thread writes the rows it completes; the open row at the end of its share is a carry in
//    shared memory. After one barrier the thread that completes a row adds the carries of the
//    threads before it that ended inside the same row (a contiguous run), and writes it.
// A single very long row lands in one block (balanced across its threads); blocks whose cut
// falls wholly inside that row own nothing and leave at once.
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"csr_merge",
          sparse_op::spmv,
          format_kind::csr,
          "merge-path: equal rows+nonzeros per block (blocks own whole rows) and per thread, "
          "carries fixed up in shared memory",
          {},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"rows_per_block",
            {16, 64, 256},
            "sets the grid (ceil(rows / n) blocks); derived as block * items_per_thread / "
            "(1 + mean row length)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
@MERGE_SEARCH@
extern "C" __global__ void spmv_csr(@ARGS@) {
  __shared__ int bounds[2];
  __shared__ int carry_row[kBlock];
  __shared__ float carry_val[kBlock];
  merge_block_rows(row_ptr, rows, bounds);
  const int row_begin = bounds[0], row_end = bounds[1];
  if (row_begin >= row_end) return;  // uniform: no row ends in this cut

  // The block's own merge problem: rows [row_begin, row_end) with all their nonzeros.
  const int nz_begin = row_ptr[row_begin];
  const int n_rows = row_end - row_begin;
  const int n_nnz = row_ptr[row_end] - nz_begin;
  const int* __restrict__ local_end = row_ptr + row_begin + 1;
  const long long items = (long long)n_rows + n_nnz;
  const long long share = (items + kBlock - 1) / kBlock;
  const long long d0 = min(share * threadIdx.x, items);
  long long remaining = min(d0 + share, items) - d0;
  int r = merge_search(d0, local_end, nz_begin, n_rows, n_nnz);  // local row
  int j = (int)(d0 - r) + nz_begin;                               // global nonzero

  float sum = 0.0f, first_sum = 0.0f;
  int first_row = -1;  // the first row this thread completes: it may owe carries
  while (remaining > 0) {
    const int stop = r < n_rows ? local_end[r] : nz_begin + n_nnz;
    const int take = (int)min((long long)(stop - j), remaining);
    for (int t = 0; t < take; ++t) sum += values[j + t] * __ldg(&x[col_idx[j + t]]);
    j += take;
    remaining -= take;
    if (remaining > 0) {  // the next item is row r's end: the row is complete here
      if (first_row < 0) {
        first_row = r;
        first_sum = sum;
      } else {
        y[row_begin + r] = sum;
      }
      sum = 0.0f;
      ++r;
      --remaining;
    }
  }
  carry_row[threadIdx.x] = r;  // the row still open where this thread's share ends
  carry_val[threadIdx.x] = sum;
  __syncthreads();
  if (first_row >= 0) {
    for (int t = (int)threadIdx.x - 1; t >= 0 && carry_row[t] == first_row; --t)
      first_sum += carry_val[t];
    y[row_begin + first_row] = first_sum;
  }
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  std::vector<expert_config> out;
  const double items_per_row = 1.0 + f.row_length_mean;
  for (int64_t block : {128, 256})
    for (int64_t per_thread : {6, 16}) {
      const int64_t rows =
          clamp64(static_cast<int64_t>(block * per_thread / items_per_row), 1, 1 << 16);
      out.push_back(make_config(info(), {}, {{"block", block}, {"rows_per_block", rows}}));
    }
  return out;
}

kernel_program emit(const expert_config& c) {
  require_block(c, c.param("block"));
  require(c.param("rows_per_block") >= 1, c, "rows_per_block must be >= 1");
  return emit_rows_kernel(c, format_kind::csr, source, c.param("rows_per_block"),
                          {{"MERGE_SEARCH", merge_search_source}});
}

}  // namespace

family csr_merge_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
