// ELL SpMV: a thread per row; slot j of all rows is contiguous (column-major), so a warp's loads
// of one slot are coalesced. A row fills its first slots (formats.h), so the first padding slot
// (col -1) ends the row: x is never indexed with it. The slots are streamed with __ldcs
// (evict-first), so they do not push x out of the caches (SpMV probe, H100 2026-12-07: road in
// random order 1.105x of cuSPARSE against 1.054x with plain loads; mesh2d / kNN in random order
// and random_d12 within 0.3%).
#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"ell",
          sparse_op::spmv,
          format_kind::ell,
          "one thread per row over the column-major slots",
          {},
          {{"block", {128, 256, 512}, "threads per block (a multiple of 32)"},
           {"unroll", {1, 4}, "unroll factor of the slot loop"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kUnroll = @unroll@;        // unroll factor of the slot loop

extern "C" __global__ void spmv_ell(@ARGS@) {
  const long long row = (long long)blockIdx.x * kBlock + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
#pragma unroll kUnroll
  for (int j = 0; j < width; ++j) {
    const size_t at = (size_t)j * rows + row;
    const int c = __ldcs(&col_idx[at]);
    if (c < 0) break;  // a row fills its first slots: the rest is padding
    sum += __ldcs(&values[at]) * __ldg(&x[c]);
  }
  y[row] = sum;
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  // Padding beyond 3x the nonzeros costs more bandwidth than ELL's coalescing saves.
  if (f.nnz > 0 && f.ell_padding_ratio > 3) return {};
  return thread_per_row_space(info());
}

kernel_program emit(const expert_config& c) {
  return emit_thread_per_row(c, format_kind::ell, source);
}

}  // namespace

family ell_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
