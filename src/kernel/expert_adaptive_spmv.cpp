// CSR SpMV with row binning inside one kernel (after CSR-Adaptive, Greathouse & Daga): each block
// owns rows_per_block consecutive rows and decides by their nonzero count how to work:
//  - few nonzeros in all (short rows): CSR-stream, the block stages every product in shared
//    memory with coalesced loads, then a thread sums each row from shared memory;
//  - otherwise medium rows get a warp each and long rows (>= long_row) the whole block, reduced
//    through shared memory.
// The decisions are uniform across the block, so every __syncthreads is reached by all threads.
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"csr_adaptive",
          sparse_op::spmv,
          format_kind::csr,
          "per-block choice: shared-memory stream for short rows, warp per medium row, block "
          "per long row",
          {},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"rows_per_block", {32, 128, 512}, "rows a block owns (>= 1); derived from the mean"},
           {"stream_cap", {1024, 4096}, "nonzeros a block can stage in shared memory (<= 8192)"},
           {"long_row", {1024}, "rows at least this long are reduced by the whole block"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;
constexpr int kStreamCap = @stream_cap@;  // nonzeros a block stages in shared memory
constexpr int kLongRow = @long_row@;      // rows this long are reduced by the whole block
constexpr int kWarps = kBlock / 32;

@WARP_SUM@

extern "C" __global__ void spmv_csr(@ARGS@) {
  __shared__ float staged[kStreamCap];
  __shared__ float partial[kWarps];
  const long long first = (long long)blockIdx.x * kRowsPerBlock;
  if (first >= rows) return;  // uniform across the block
  const int r0 = (int)first;
  const int r1 = (int)min((long long)rows, first + kRowsPerBlock);
  const int base = row_ptr[r0];
  const int block_nnz = row_ptr[r1] - base;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  if (block_nnz <= kStreamCap) {
    // Short rows: coalesced products into shared memory, then one thread per row.
    for (int i = tid; i < block_nnz; i += kBlock)
      staged[i] = values[base + i] * __ldg(&x[col_idx[base + i]]);
    __syncthreads();
    for (int r = r0 + tid; r < r1; r += kBlock) {
      const int end = row_ptr[r + 1] - base;
      float sum = 0.0f;
      for (int i = row_ptr[r] - base; i < end; ++i) sum += staged[i];
      y[r] = sum;
    }
    return;
  }

  // Medium rows: a warp per row (the length test is uniform per warp).
  for (int r = r0 + warp; r < r1; r += kWarps) {
    const int begin = row_ptr[r], end = row_ptr[r + 1];
    if (end - begin >= kLongRow) continue;
    float sum = 0.0f;
    for (int i = begin + lane; i < end; i += 32) sum += values[i] * __ldg(&x[col_idx[i]]);
    sum = warp_sum(sum);
    if (lane == 0) y[r] = sum;
  }

  // Long rows: the whole block per row (the length test is uniform per block).
  for (int r = r0; r < r1; ++r) {
    const int begin = row_ptr[r], end = row_ptr[r + 1];
    if (end - begin < kLongRow) continue;
    float sum = 0.0f;
    for (int i = begin + tid; i < end; i += kBlock) sum += values[i] * __ldg(&x[col_idx[i]]);
    sum = warp_sum(sum);
    if (lane == 0) partial[warp] = sum;
    __syncthreads();
    if (warp == 0) {
      sum = warp_sum(lane < kWarps ? partial[lane] : 0.0f);
      if (lane == 0) y[r] = sum;
    }
    __syncthreads();  // partial[] is reused by the next long row
  }
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  // Row binning pays when lengths vary; on even rows csr_vector does the same work with less
  // control flow.
  std::vector<expert_config> out;
  if (f.nnz == 0) return out;
  const bool irregular = f.row_length_std > 0.5 * f.row_length_mean ||
                         f.row_length_max > 4 * std::max(1.0, f.row_length_mean);
  if (!irregular) return out;
  const double mean = std::max(1.0, f.row_length_mean);
  for (int64_t cap : {1024, 4096}) {
    // Size the block's rows so that their nonzeros about fill the stage: typical blocks stream.
    const int64_t rows = clamp64(static_cast<int64_t>(cap / mean), 8, 1024);
    for (int64_t block : {128, 256})
      out.push_back(make_config(
          info(), {},
          {{"block", block}, {"rows_per_block", rows}, {"stream_cap", cap}, {"long_row", 1024}}));
  }
  return out;
}

kernel_program emit(const expert_config& c) {
  require(c.param("long_row") >= 1, c, "long_row must be >= 1");
  return emit_row_stream(c, format_kind::csr, source, {{"WARP_SUM", warp_sum_source}});
}

}  // namespace

family csr_adaptive_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
