// CSR16 SpMV: csr_vector on CSR16 (a power-of-two lane group per row, shuffle reduction); each
// column is the row's col_base plus a 16-bit offset, so a nonzero streams 6 bytes, not 8.
// lanes = 1 is a thread per row.
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"csr16_vector",
          sparse_op::spmv,
          format_kind::csr16,
          "a group of `lanes` threads per row over 16-bit column offsets, shuffle reduction",
          {},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"lanes", {1, 2, 4, 8, 16, 32}, "threads per row (a power of two <= 32)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kLanes = kBlock / SPARSERL_ROWS_PER_BLOCK;  // threads per row
constexpr int kRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;

extern "C" __global__ void spmv_csr16(@ARGS@) {
  const int lane = threadIdx.x & (kLanes - 1);
  const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kLanes;
  float sum = 0.0f;
  if (row < rows) {
    const int end = row_ptr[row + 1];
    const float* __restrict__ x_row = x + col_base[row];  // every column of the row is past it
    for (int i = row_ptr[row] + lane; i < end; i += kLanes)
      sum += values[i] * __ldg(&x_row[col_offset[i]]);
  }
  // No thread returned early, so every lane of the warp takes part in the shuffles.
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset, kLanes);
  if (lane == 0 && row < rows) y[row] = sum;
}
)";

// CSR16 holds the matrix only when no row spans more than 65535 columns.
bool fits(const matrix_features& f) { return f.row_span_max <= 65535; }

std::vector<expert_config> space(const matrix_features& f, int) {
  // As csr_vector, plus a thread per row when rows are short: up to 12 a row, where csr_scalar
  // (a thread per row over 8-byte entries) was the fastest on 2D meshes in a local order (H100
  // realistic suite, 2026-12-05: mesh2d_rcm, 7 a row, csr_scalar 2.24 TB/s, CSR16 with 2 lanes
  // 1.75), and lanes_per_row_space stops at 4 a row.
  if (!fits(f)) return {};
  std::vector<expert_config> out = lanes_per_row_space(info(), f, {1, 2, 4, 8, 16, 32});
  const bool has_thread_per_row = std::any_of(
      out.begin(), out.end(), [](const expert_config& c) { return c.param("lanes") == 1; });
  if (f.row_length_mean <= 12 && !has_thread_per_row)
    for (int64_t block : {128, 256})
      out.push_back(make_config(info(), {}, {{"block", block}, {"lanes", 1}}));
  return out;
}

kernel_program emit(const expert_config& c) {
  return emit_lanes_per_row(c, format_kind::csr16, source);
}

}  // namespace

family csr16_vector_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
