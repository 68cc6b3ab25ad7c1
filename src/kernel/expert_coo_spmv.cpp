// COO SpMV in two entries: spmv_coo_init zeroes y (the harness poisons it), then spmv_coo adds
// each row segment with a warp-segmented shuffle scan and one atomicAdd per segment.
#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"coo",
          sparse_op::spmv,
          format_kind::coo,
          "zero y, then warps scan 32-entry chunks segmented by row, one atomic per segment",
          {},
          {{"block", {128, 256}, "threads per block of spmv_coo (a multiple of 32)"},
           {"steps", {1, 4, 16}, "32-entry chunks per warp (nnz_per_block = block * steps)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_SPMV_COO_BLOCK;  // spmv_coo's LAUNCH block
constexpr int kSteps = SPARSERL_SPMV_COO_NNZ_PER_BLOCK / kBlock;  // 32-entry chunks per warp
constexpr int kInitBlock = 256;

extern "C" __global__ void spmv_coo_init(@ARGS@) {
  const long long row = (long long)blockIdx.x * kInitBlock + threadIdx.x;
  if (row < rows) y[row] = 0.0f;
}
@SEGMENT@)";

std::vector<expert_config> space(const matrix_features& f, int) {
  // Work per thread is independent of row lengths: a safe choice for skewed matrices; more
  // steps per warp when rows are long (fewer atomics per row: a warp adds once per row it
  // touches, so a row of 400k nonzeros takes 3k same-address atomics at 4 steps, 800 at 16).
  std::vector<expert_config> out;
  out.push_back(make_config(info(), {}, {{"block", 256}, {"steps", 1}}));
  out.push_back(make_config(info(), {}, {{"block", 256}, {"steps", 4}}));
  if (f.row_length_mean > 32 || f.row_length_max > long_tail_row)
    out.push_back(make_config(info(), {}, {{"block", 256}, {"steps", 16}}));
  if (f.row_length_max > 16 * long_tail_row)
    out.push_back(make_config(info(), {}, {{"block", 256}, {"steps", 64}}));
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), steps = c.param("steps");
  require_block(c, block);
  require(steps >= 1 && steps <= 1024, c, "steps must be 1..1024");
  const std::string args = entry_args(sparse_op::spmv, format_kind::coo);
  auto values = as_text(c.params);
  values["ARGS"] = args;
  values["SEGMENT"] = fill(coo_segment_source, {{"ENTRY", "spmv_coo"},
                                                {"ARGS", args},
                                                {"NNZ", "nnz"},
                                                {"ROW", "row_idx"},
                                                {"COL", "col_idx"},
                                                {"VAL", "values"}});
  kernel_program p;
  p.launches = {rows_launch("spmv_coo_init", 256, 256),
                nnz_launch("spmv_coo", block, block * steps)};
  p.source = fill(source, values);
  return p;
}

}  // namespace

family coo_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
