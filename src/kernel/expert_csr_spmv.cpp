// CSR SpMV, scalar (a thread per row) and vector (a power-of-two lane group per row).
#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template scalar_info() {
  return {"csr_scalar",
          sparse_op::spmv,
          format_kind::csr,
          "one thread per row; best when rows are short and even",
          {},
          {{"block", {64, 128, 256, 512}, "threads per block (a multiple of 32)"},
           {"unroll", {1, 4}, "unroll factor of the nonzero loop"}}};
}

const char* const scalar_source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kUnroll = @unroll@;        // unroll factor of the nonzero loop

extern "C" __global__ void spmv_csr(@ARGS@) {
  const long long row = (long long)blockIdx.x * kBlock + threadIdx.x;
  if (row >= rows) return;
  const int end = row_ptr[row + 1];
  float sum = 0.0f;
#pragma unroll kUnroll
  for (int i = row_ptr[row]; i < end; ++i) sum += values[i] * __ldg(&x[col_idx[i]]);
  y[row] = sum;
}
)";

std::vector<expert_config> scalar_space(const matrix_features& f, int) {
  std::vector<expert_config> out;
  // Always offered (the fallback for every matrix); more sizes only when rows are short, where
  // a thread per row keeps loads coalesced enough to compete.
  out.push_back(make_config(scalar_info(), {}, {{"block", 128}, {"unroll", 1}}));
  if (f.row_length_mean <= 12) {
    out.push_back(make_config(scalar_info(), {}, {{"block", 256}, {"unroll", 1}}));
    out.push_back(make_config(scalar_info(), {}, {{"block", 256}, {"unroll", 4}}));
  }
  return out;
}

kernel_program scalar_emit(const expert_config& c) {
  return emit_thread_per_row(c, format_kind::csr, scalar_source, 1);
}

expert_template vector_info() {
  return {"csr_vector",
          sparse_op::spmv,
          format_kind::csr,
          "a group of `lanes` threads per row, shuffle reduction; block / lanes rows per block",
          {},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"lanes", {2, 4, 8, 16, 32}, "threads per row (a power of two <= 32)"}}};
}

const char* const vector_source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kLanes = kBlock / SPARSERL_ROWS_PER_BLOCK;  // threads per row
constexpr int kRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;

extern "C" __global__ void spmv_csr(@ARGS@) {
  const int lane = threadIdx.x & (kLanes - 1);
  const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kLanes;
  float sum = 0.0f;
  if (row < rows) {
    const int end = row_ptr[row + 1];
    for (int i = row_ptr[row] + lane; i < end; i += kLanes)
      sum += values[i] * __ldg(&x[col_idx[i]]);
  }
  // No thread returned early, so every lane of the warp takes part in the shuffles.
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset, kLanes);
  if (lane == 0 && row < rows) y[row] = sum;
}
)";

std::vector<expert_config> vector_space(const matrix_features& f, int) {
  return lanes_per_row_space(vector_info(), f, {2, 4, 8, 16, 32});
}

kernel_program vector_emit(const expert_config& c) {
  return emit_lanes_per_row(c, format_kind::csr, vector_source);
}

}  // namespace

family csr_scalar_spmv() { return {scalar_info(), scalar_space, scalar_emit}; }
family csr_vector_spmv() { return {vector_info(), vector_space, vector_emit}; }

}  // namespace sparserl::expert_detail
