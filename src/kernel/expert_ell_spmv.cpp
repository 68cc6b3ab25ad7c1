// ELL SpMV: a thread per row; slot j of all rows is contiguous (column-major), so a warp's loads
// of one slot are coalesced. A row fills its first slots (formats.h), so the first padding slot
// (col -1) ends the row: x is never indexed with it.
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
constexpr int kBlock = @block@;

extern "C" __global__ void spmv_ell(@ARGS@) {
  const long long row = (long long)blockIdx.x * kBlock + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
#pragma unroll @unroll@
  for (int j = 0; j < width; ++j) {
    const size_t at = (size_t)j * rows + row;
    const int c = col_idx[at];
    if (c < 0) break;  // a row fills its first slots: the rest is padding
    sum += values[at] * __ldg(&x[c]);
  }
  y[row] = sum;
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  // Padding beyond 3x the nonzeros costs more bandwidth than ELL's coalescing saves.
  std::vector<expert_config> out;
  if (f.nnz > 0 && f.ell_padding_ratio > 3) return out;
  for (int64_t block : {128, 256, 512})
    out.push_back(make_config(info(), {}, {{"block", block}, {"unroll", 1}}));
  out.push_back(make_config(info(), {}, {{"block", 256}, {"unroll", 4}}));
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block");
  require(block >= 32 && block <= 1024 && block % 32 == 0, c, "block must be 32..1024, x32");
  require(c.param("unroll") >= 1 && c.param("unroll") <= 32, c, "unroll must be 1..32");
  auto values = as_text(c.params);
  values["ARGS"] = entry_args(sparse_op::spmv, format_kind::ell);
  kernel_program p;
  p.launches = {rows_launch("", block, block)};
  p.source = fill(source, values);
  return p;
}

}  // namespace

family ell_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
