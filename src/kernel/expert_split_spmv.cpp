// CSR SpMV that splits long rows across blocks, in the one kernel the CSR ABI allows.
//
// Short and medium rows: a lane group per row (as csr_vector), a medium row (longer than 8 steps
// of its group) taken by the whole warp instead. Long rows (more than `chunk` nonzeros): the
// nonzero array is cut into chunks of `chunk`; every stride-th block also owns chunks (stride =
// grid / chunks when the grid has more blocks), finds the rows holding a chunk's first and last
// nonzero with a block-wide search of row_ptr (only those two rows can be long: any other row of
// the chunk lies inside it), and sums its share of each long one.
//
// y is poisoned and nothing orders blocks, so the shares meet in module-scope scratch that starts
// zeroed: each share is added to its row's slot (the index of the row's first chunk; a long row
// spans at least two chunks' worth, so no two long rows share one), a fence, then a count; the
// share that completes the count writes y and zeroes the slot for the next launch ("last block"
// reduction, as in the CUDA threadFenceReduction sample). `slots` bounds the scratch: on a matrix
// with more than slots * chunk nonzeros the chunk grows to fit, rows up to it staying in the
// row path. Meant for circuit and power-law matrices, where a few rows hold 10^5 nonzeros; it
// has not beaten HYB or COO there (see space()).
#include <algorithm>
#include <cmath>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {
      "csr_split",
      sparse_op::spmv,
      format_kind::csr,
      "lane group per row, warp per medium row; rows over `chunk` nonzeros split in chunks "
      "over blocks, met by a last-block reduction in module scratch",
      {},
      {{"block", {256}, "threads per block (a multiple of 32)"},
       {"lanes", {2, 4, 8, 16, 32}, "threads per row (a power of two <= 32)"},
       {"chunk", {1024, 4096}, "nonzeros per share of a long row; longer rows are split (>= 32)"},
       {"slots", {1 << 18}, "scratch slots (the chunk grows so nnz / chunk fits; 1..2^22)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kLanes = kBlock / SPARSERL_ROWS_PER_BLOCK;  // threads per row
constexpr int kRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;
constexpr int kChunk = @chunk@;
constexpr int kSlots = @slots@;
constexpr int kWarps = kBlock / 32;
constexpr int kMedium = kLanes < 32 ? 8 * kLanes : 0x7fffffff;  // longer: the whole warp

__device__ float split_sum[kSlots];  // zero at load; each launch leaves it zero
__device__ unsigned int split_count[kSlots];

@WARP_SUM@

// The row holding nonzero e (row_ptr[r] <= e < row_ptr[r + 1]), found by the whole block:
// kBlock probes a round narrow [lo, hi) kBlock-fold. Every thread calls it (it has barriers).
__device__ int row_of(const int* __restrict__ row_ptr, int rows, long long e, int* bounds) {
  if (threadIdx.x == 0) {
    bounds[0] = 0;
    bounds[1] = rows;
  }
  __syncthreads();
  while (true) {
    const int lo = bounds[0], hi = bounds[1];
    if (hi - lo <= 1) break;  // uniform: every thread read the same bounds
    const long long step = (hi - lo + kBlock - 1) / kBlock;
    const long long p = lo + threadIdx.x * step, q = p + step;
    __syncthreads();  // all have read bounds before one thread moves them
    if (p < hi && row_ptr[p] <= e && !(q < hi && row_ptr[q] <= e)) {
      bounds[0] = (int)p;  // exactly one probe is the last at or before e
      bounds[1] = (int)min(q, (long long)hi);
    }
    __syncthreads();
  }
  const int r = bounds[0];
  __syncthreads();  // bounds is reused by the next search
  return r;
}

// Adds this block's share [e0, e1) of row r to the row's slot when r is long; the last share to
// arrive writes y[r]. Uniform across the block.
__device__ void long_row_share(int r, long long e0, long long e1, long long chunk,
                               const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                               const float* __restrict__ values, const float* __restrict__ x,
                               float* __restrict__ y, float* partial) {
  const long long begin = row_ptr[r], end = row_ptr[r + 1];
  if (end - begin <= chunk) return;
  float sum = 0.0f;
  for (long long i = max(e0, begin) + threadIdx.x; i < min(e1, end); i += kBlock)
    sum += values[i] * __ldg(&x[col_idx[i]]);
  sum = warp_sum(sum);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarps; ++w) sum += partial[w];
    const long long slot = begin / chunk;
    const unsigned int shares = (unsigned int)((end - 1) / chunk - slot + 1);
    atomicAdd(&split_sum[slot], sum);
    __threadfence();  // the sum is visible before the count says so
    if (atomicAdd(&split_count[slot], 1u) == shares - 1) {
      y[r] = atomicExch(&split_sum[slot], 0.0f);
      split_count[slot] = 0;
    }
  }
  __syncthreads();  // partial is reused
}

extern "C" __global__ void spmv_csr(@ARGS@) {
  __shared__ int bounds[2];
  __shared__ float partial[kWarps];
  // Chunks grow on huge matrices so that every long row's first chunk has a slot.
  const long long chunk = max((long long)kChunk, ((long long)nnz + kSlots - 1) / kSlots);
  const long long chunks = ((long long)nnz + chunk - 1) / chunk;
  // Chunk owners are spread over the grid (every stride-th block), so the searches' latency hides
  // behind the row path of the blocks beside them instead of filling the first waves.
  const long long stride = max(1LL, (long long)gridDim.x / max(chunks, 1LL));
  const long long owners = gridDim.x / stride;
  const bool owner = blockIdx.x % stride == 0;
  for (long long c = blockIdx.x / stride; owner && c < chunks; c += owners) {
    const long long e0 = c * chunk, e1 = min(e0 + chunk, (long long)nnz);
    const int first = row_of(row_ptr, rows, e0, bounds);
    const int last = row_of(row_ptr, rows, e1 - 1, bounds);
    long_row_share(first, e0, e1, chunk, row_ptr, col_idx, values, x, y, partial);
    if (last != first) long_row_share(last, e0, e1, chunk, row_ptr, col_idx, values, x, y, partial);
  }

  // The row path; no thread returns early, so whole warps reach the shuffles.
  const int lane = threadIdx.x & (kLanes - 1), warp_lane = threadIdx.x & 31;
  const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kLanes;
  int begin = 0, end = 0;
  if (row < rows) {
    begin = row_ptr[row];
    end = row_ptr[row + 1];
  }
  const bool split = end - begin > chunk;  // written by the shares above
  const bool medium = !split && end - begin > kMedium;
  float sum = 0.0f;
  if (!split && !medium)
    for (int i = begin + lane; i < end; i += kLanes) sum += values[i] * __ldg(&x[col_idx[i]]);
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset, kLanes);
  if (lane == 0 && row < rows && !split && !medium) y[row] = sum;
  // Medium rows of this warp, one at a time by all 32 lanes.
  for (unsigned int todo = __ballot_sync(0xffffffffu, medium && lane == 0); todo;
       todo &= todo - 1) {
    const int src = __ffs(todo) - 1;
    const int b = __shfl_sync(0xffffffffu, begin, src), e = __shfl_sync(0xffffffffu, end, src);
    const long long r = __shfl_sync(0xffffffffu, row, src);
    float s = 0.0f;
    for (int i = b + warp_lane; i < e; i += 32) s += values[i] * __ldg(&x[col_idx[i]]);
    s = warp_sum(s);
    if (warp_lane == 0) y[r] = s;
  }
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  // One configuration, where some rows are far longer than the rest: on the H200 (2026-12-03)
  // it lost to HYB and COO on every power-law matrix of the suite (circuit 98 us against HYB's
  // 58, R-MAT 169 against COO's 106: the chunk owners' row_ptr searches cost more than the
  // split saves), so it stays in the library and the corpus but costs the tuner one timing.
  if (f.nnz == 0 || (f.row_length_max <= 1024 && !skewed_rows(f))) return {};
  const int64_t chunk =
      f.row_length_max > 4096 ? 4096 : std::max<int64_t>(32, pow2_at_least(f.row_length_max / 4));
  const int64_t lanes = clamp64(pow2_at_least(static_cast<int64_t>(f.row_length_mean / 4)), 2, 32);
  return {make_config(info(), {},
                      {{"block", 256}, {"lanes", lanes}, {"chunk", chunk}, {"slots", 1 << 18}})};
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), lanes = c.param("lanes");
  require_block(c, block);
  require(is_pow2(lanes) && lanes <= 32, c, "lanes must be a power of two <= 32");
  require(c.param("chunk") >= 32 && c.param("chunk") <= (1 << 24), c, "chunk must be 32..2^24");
  require(c.param("slots") >= 1 && c.param("slots") <= (1 << 22), c, "slots must be 1..2^22");
  return emit_rows_kernel(c, format_kind::csr, source, block / lanes,
                          {{"WARP_SUM", warp_sum_source}});
}

}  // namespace

family csr_split_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
