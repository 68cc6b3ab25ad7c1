// COO SpMV in two entries: spmv_coo_init zeroes y (the harness poisons it), then spmv_coo adds
// each row segment with a warp-segmented shuffle scan and one atomicAdd per segment.
// coo4 is the same with four consecutive entries a lane (coo_segment, per_lane 4): 128-entry warp
// steps of 16-byte streamed loads, where a lane sums its own runs of one row and only the lanes'
// last runs go through the scan, so 128 entries cost the shuffles that COO spends on 32.
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

expert_template info4() {
  return {"coo4",
          sparse_op::spmv,
          format_kind::coo,
          "zero y, then warps scan 128-entry steps, four entries a lane (16-byte streamed "
          "loads), lane runs joined by a segmented scan, one atomic per run",
          {},
          {{"block", {256}, "threads per block of spmv_coo (a multiple of 32)"},
           {"steps", {1, 2, 4}, "128-entry steps per warp (nnz_per_block = block * 4 * steps)"}}};
}

// spmv_coo's steps per warp: 32 entries (coo) or 128, four a lane (coo4).
const char* const steps_32 =
    "constexpr int kSteps = SPARSERL_SPMV_COO_NNZ_PER_BLOCK / kBlock;  // 32-entry chunks per warp";
const char* const steps_128 =
    "constexpr int kSteps = SPARSERL_SPMV_COO_NNZ_PER_BLOCK / (4 * kBlock);  // 128-entry steps "
    "per warp";

const char* const source = R"(
constexpr int kBlock = SPARSERL_SPMV_COO_BLOCK;  // spmv_coo's LAUNCH block
@STEPS@
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

// coo4 wherever COO is offered (every matrix): fewer shuffles and load instructions per entry.
std::vector<expert_config> space4(const matrix_features& f, int) {
  std::vector<expert_config> out;
  if (f.nnz == 0) return out;
  for (int64_t steps : {1, 2, 4})
    out.push_back(make_config(info4(), {}, {{"block", 256}, {"steps", steps}}));
  return out;
}

// `per_lane` entries a lane: 1 (coo) or 4 (coo4).
kernel_program emit_coo(const expert_config& c, int per_lane) {
  const int64_t block = c.param("block"), steps = c.param("steps");
  require_block(c, block);
  require(steps >= 1 && steps * per_lane <= 1024, c,
          "steps must be 1.." + std::to_string(1024 / per_lane));
  const std::string args = entry_args(sparse_op::spmv, format_kind::coo);
  auto values = as_text(c.params);
  values["ARGS"] = args;
  values["STEPS"] = per_lane == 4 ? steps_128 : steps_32;
  values["SEGMENT"] = coo_segment(per_lane, "spmv_coo", args, "");
  kernel_program p;
  p.launches = {rows_launch("spmv_coo_init", 256, 256),
                nnz_launch("spmv_coo", block, block * per_lane * steps)};
  p.source = fill(source, values);
  return p;
}

kernel_program emit(const expert_config& c) { return emit_coo(c, 1); }
kernel_program emit4(const expert_config& c) { return emit_coo(c, 4); }

}  // namespace

family coo_spmv() { return {info(), space, emit}; }
family coo4_spmv() { return {info4(), space4, emit4}; }

}  // namespace sparserl::expert_detail
