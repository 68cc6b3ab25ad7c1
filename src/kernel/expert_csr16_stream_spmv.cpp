// CSR16 stream SpMV: CSR-stream (Greathouse & Daga) over 16-bit column offsets. Each block owns
// rows_per_block consecutive rows; when their nonzeros fit the stage, the block copies their
// offsets and values into shared memory with coalesced loads, then a thread per row sums its row
// from there. A thread per row reading its own entries (csr16_vector lanes=1) touches a warp's
// 32 rows x 7 entries in 7 strided steps; staged, the 6 bytes a nonzero stream in full sectors.
// Blocks whose rows do not fit the stage read them directly, a thread a row.
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

extern "C" __global__ void spmv_csr16(@ARGS@) {
  __shared__ float staged_values[kStreamCap];
  __shared__ unsigned short staged_offsets[kStreamCap];
  const long long first = (long long)blockIdx.x * kRowsPerBlock;
  if (first >= rows) return;  // uniform across the block
  const int r0 = (int)first;
  const int r1 = (int)min((long long)rows, first + kRowsPerBlock);
  const int base = row_ptr[r0];
  const int block_nnz = row_ptr[r1] - base;

  if (block_nnz <= kStreamCap) {  // uniform across the block
    for (int i = threadIdx.x; i < block_nnz; i += kBlock) {
      staged_values[i] = values[base + i];
      staged_offsets[i] = col_offset[base + i];
    }
    __syncthreads();
    for (int r = r0 + threadIdx.x; r < r1; r += kBlock) {
      const float* __restrict__ x_row = x + col_base[r];  // every column of the row is past it
      const int end = row_ptr[r + 1] - base;
      float sum = 0.0f;
      for (int i = row_ptr[r] - base; i < end; ++i)
        sum += staged_values[i] * __ldg(&x_row[staged_offsets[i]]);
      y[r] = sum;
    }
    return;
  }

  // Too many nonzeros to stage: a thread per row, straight from global memory.
  for (int r = r0 + threadIdx.x; r < r1; r += kBlock) {
    const float* __restrict__ x_row = x + col_base[r];
    const int end = row_ptr[r + 1];
    float sum = 0.0f;
    for (int i = row_ptr[r]; i < end; ++i) sum += values[i] * __ldg(&x_row[col_offset[i]]);
    y[r] = sum;
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
