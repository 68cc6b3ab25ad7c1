// CSR16 stream SpMV: CSR-stream (Greathouse & Daga) over 16-bit column offsets. Each block owns
// rows_per_block consecutive rows; when their nonzeros fit the stage, the block copies their
// offsets and values into shared memory with coalesced loads, then a thread per row sums its row
// from there. A thread per row reading its own entries (csr16_vector lanes=1) touches a warp's
// 32 rows x 7 entries in 7 strided steps; staged, the 6 bytes a nonzero stream in full sectors.
// Blocks whose rows do not fit the stage read them directly, a thread a row. Staging loads go
// out in batches before their stores, with the thread's row bounds alongside (a load-store loop
// waits on each load): up to 18% faster on an H100, yet behind csr16_vector on every matrix
// timed there (docs/benchmarks.md, 2026-12-07/08).
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"csr16_stream",
          sparse_op::spmv,
          format_kind::csr16,
          "a block stages its rows' 16-bit offsets and values in shared memory (coalesced), then "
          "a thread sums each row",
          {},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"rows_per_block", {128, 256, 512}, "rows a block owns (>= 1)"},
           {"stream_cap", {1024, 2048, 4096}, "nonzeros a block can stage (<= 8192)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;
constexpr int kStreamCap = @stream_cap@;  // nonzeros a block stages in shared memory
constexpr int kStageSteps = (kStreamCap + kBlock - 1) / kBlock;  // staging loads a thread
constexpr int kStageBatch = kStageSteps < 8 ? kStageSteps : 8;  // issued before their stores

extern "C" __global__ void spmv_csr16(@ARGS@) {
  __shared__ float staged_values[kStreamCap];
  __shared__ unsigned short staged_offsets[kStreamCap];
  const long long first = (long long)blockIdx.x * kRowsPerBlock;
  if (first >= rows) return;  // uniform across the block
  const int r0 = (int)first;
  const int r1 = (int)min((long long)rows, first + kRowsPerBlock);
  // The block's bounds and this thread's first row are independent loads, issued together: the
  // chain to y is then bounds -> stage -> x, no longer than a thread reading its row directly.
  const int base = row_ptr[r0];
  const int block_nnz = row_ptr[r1] - base;
  int r = r0 + (int)threadIdx.x;
  int begin = 0, end = 0, col0 = 0;
  if (r < r1) {
    begin = row_ptr[r];
    end = row_ptr[r + 1];
    col0 = col_base[r];
  }
  const bool staged = block_nnz <= kStreamCap;  // uniform across the block

  if (staged) {
    // A batch of loads in flight before its stores (a load-store loop waits on each load).
    for (int s0 = 0; s0 < kStageSteps && s0 * kBlock < block_nnz; s0 += kStageBatch) {
      float v[kStageBatch];
      unsigned short o[kStageBatch];
#pragma unroll
      for (int s = 0; s < kStageBatch; ++s) {
        const int i = (int)threadIdx.x + (s0 + s) * kBlock;
        if (i < block_nnz) {
          v[s] = values[base + i];
          o[s] = col_offset[base + i];
        }
      }
#pragma unroll
      for (int s = 0; s < kStageBatch; ++s) {
        const int i = (int)threadIdx.x + (s0 + s) * kBlock;
        if (i < block_nnz) {
          staged_values[i] = v[s];
          staged_offsets[i] = o[s];
        }
      }
    }
    __syncthreads();
  }
  // A thread per row, from the stage or, when the block's rows overflow it, from global memory.
  while (r < r1) {
    const float* __restrict__ x_row = x + col0;  // every column of the row is past it
    float sum = 0.0f;
    if (staged) {
      for (int i = begin - base; i < end - base; ++i)
        sum += staged_values[i] * __ldg(&x_row[staged_offsets[i]]);
    } else {
      for (int i = begin; i < end; ++i) sum += values[i] * __ldg(&x_row[col_offset[i]]);
    }
    y[r] = sum;
    r += kBlock;
    if (r < r1) {
      begin = row_ptr[r];
      end = row_ptr[r + 1];
      col0 = col_base[r];
    }
  }
}
)";

// Short rows only (a mean of 32 or fewer: meshes, kNN graphs, the classic banded matrix's 25):
// a thread sums a row, so long rows would serialise (csr16_vector's lane groups take them). Rows
// per block: one and two a thread; the stage about twice the mean share, so blocks of average rows
// stream.
std::vector<expert_config> space(const matrix_features& f, int) {
  std::vector<expert_config> out;
  if (f.nnz == 0 || f.row_span_max > 65535 || f.row_length_mean > 32) return out;
  for (int64_t block : {128, 256})
    for (int64_t per_thread : {1, 2}) {
      const int64_t rows = block * per_thread;
      const double staged = 2.0 * std::max(1.0, f.row_length_mean) * static_cast<double>(rows);
      const int64_t cap = clamp64(pow2_at_least(static_cast<int64_t>(staged)), 256, 8192);
      // A stage smaller than an average block's nonzeros would send most blocks down the
      // direct path (a thread per row from global memory, as csr16_vector with one lane).
      if (f.row_length_mean * static_cast<double>(rows) > static_cast<double>(cap)) continue;
      out.push_back(make_config(info(), {},
                                {{"block", block}, {"rows_per_block", rows}, {"stream_cap", cap}}));
    }
  return out;
}

kernel_program emit(const expert_config& c) {
  return emit_row_stream(c, format_kind::csr16, source);
}

}  // namespace

family csr16_stream_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
