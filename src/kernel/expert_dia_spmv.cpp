// DIA SpMV: a thread per row (or per rows_per_thread rows, kBlock apart) over the diagonals;
// diagonal d of consecutive rows is contiguous, so loads are coalesced, and offsets[d] is the
// same address for the whole warp (a broadcast). The kernel is a pure stream bound by the loads
// in flight: unrolling the diagonal loop and several rows per thread both add independent loads
// (on the H200, 2026-12-03: unroll 4 ran 1.45x faster than none on a 49-diagonal band, and
// unroll 8 with 2 rows per thread 1.1-1.2x faster again on the large stencils).
#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"dia",
          sparse_op::spmv,
          format_kind::dia,
          "one thread per row (or a few rows, a block apart) over the stored diagonals",
          {},
          {{"block", {128, 256, 512}, "threads per block (a multiple of 32)"},
           {"unroll", {1, 4, 8}, "unroll factor of the diagonal loop"},
           {"rows_per_thread", {1, 2, 4}, "rows a thread sums, kBlock apart (1..8)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kRowsPerThread = SPARSERL_ROWS_PER_BLOCK / kBlock;
constexpr int kUnroll = @unroll@;  // unroll factor of the diagonal loop

extern "C" __global__ void spmv_dia(@ARGS@) {
  const long long first = (long long)blockIdx.x * (kBlock * kRowsPerThread) + threadIdx.x;
  float sum[kRowsPerThread];
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j) sum[j] = 0.0f;
#pragma unroll kUnroll
  for (int d = 0; d < num_diags; ++d) {
    const int offset = offsets[d];
#pragma unroll
    for (int j = 0; j < kRowsPerThread; ++j) {
      const long long row = first + (long long)j * kBlock;
      const long long col = row + offset;
      if (row < rows && col >= 0 && col < cols)
        sum[j] += values[(size_t)d * rows + row] * __ldg(&x[col]);
    }
  }
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j) {
    const long long row = first + (long long)j * kBlock;
    if (row < rows) y[row] = sum[j];
  }
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  // DIA streams every cell of its diagonals: only worth it when they are mostly full, and it
  // stores rows cells per diagonal however short the diagonal is inside the matrix (a wide
  // rectangular matrix has short diagonals), so the stored cells must stay near nnz too.
  if (f.nnz == 0 || f.diagonal_fill < 0.5) return {};
  if (static_cast<double>(f.diagonal_count) * f.rows > 3.0 * f.nnz) return {};
  std::vector<expert_config> out;
  for (int64_t block : {128, 256, 512})
    out.push_back(
        make_config(info(), {}, {{"block", block}, {"unroll", 1}, {"rows_per_thread", 1}}));
  // Deeper streams: a long band has many diagonals to unroll, a stencil few (so rows instead).
  for (int64_t unroll : {4, 8})
    for (int64_t rows : {1, 2})
      out.push_back(
          make_config(info(), {}, {{"block", 256}, {"unroll", unroll}, {"rows_per_thread", rows}}));
  out.push_back(make_config(info(), {}, {{"block", 128}, {"unroll", 4}, {"rows_per_thread", 4}}));
  out.push_back(make_config(info(), {}, {{"block", 256}, {"unroll", 8}, {"rows_per_thread", 4}}));
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t rows = c.param("rows_per_thread");
  require(rows >= 1 && rows <= 8, c, "rows_per_thread must be 1..8");
  return emit_thread_per_row(c, format_kind::dia, source, rows);
}

}  // namespace

family dia_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
