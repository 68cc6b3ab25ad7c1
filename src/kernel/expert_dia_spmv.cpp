// DIA SpMV: a thread per row over the diagonals; diagonal d of consecutive rows is contiguous,
// so loads are coalesced, and offsets[d] is the same address for the whole warp (a broadcast).
#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"dia",
          sparse_op::spmv,
          format_kind::dia,
          "one thread per row over the stored diagonals",
          {},
          {{"block", {128, 256, 512}, "threads per block (a multiple of 32)"},
           {"unroll", {1, 4}, "unroll factor of the diagonal loop"}}};
}

const char* const source = R"(
constexpr int kBlock = @block@;

extern "C" __global__ void spmv_dia(@ARGS@) {
  const long long row = (long long)blockIdx.x * kBlock + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
#pragma unroll @unroll@
  for (int d = 0; d < num_diags; ++d) {
    const long long col = row + offsets[d];
    if (col >= 0 && col < cols) sum += values[(size_t)d * rows + row] * __ldg(&x[col]);
  }
  y[row] = sum;
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  // DIA streams every cell of its diagonals: only worth it when they are mostly full, and it
  // stores rows cells per diagonal however short the diagonal is inside the matrix (a wide
  // rectangular matrix has short diagonals), so the stored cells must stay near nnz too.
  if (f.nnz == 0 || f.diagonal_fill < 0.5) return {};
  if (static_cast<double>(f.diagonal_count) * f.rows > 3.0 * f.nnz) return {};
  return thread_per_row_space(info());
}

kernel_program emit(const expert_config& c) {
  return emit_thread_per_row(c, format_kind::dia, source);
}

}  // namespace

family dia_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
