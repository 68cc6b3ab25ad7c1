// HYB SpMV: spmv_hyb_ell writes every row from the ELL part (a thread per row or per
// rows_per_thread rows a block apart, `batch` slots of each in flight, padding skipped), then
// spmv_hyb_coo adds the overflow entries (the long rows' tails, split evenly: 32 x steps entries
// per warp) with the warp-segmented COO scan and atomics. hyb4 is the same with coo4's COO part
// (four consecutive entries a lane, 128 a warp step: coo4 in expert_coo_spmv.cpp).
#include <algorithm>
#include <cmath>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"hyb",
          sparse_op::spmv,
          format_kind::hyb,
          "ELL part a thread per row (writes y), COO overflow by warp-segmented atomics",
          {{"width",
            {0, 4, 8, 16, 32},
            "ELL slots per row (0 = the harness's automatic width); derived from the row lengths"}},
          {{"block", {128, 256}, "threads per block of both entries (a multiple of 32)"},
           {"steps", {1, 4, 16, 64}, "32-entry COO chunks per warp"},
           {"batch", {4, 8}, "ELL slots of a row loaded together (1..16)"},
           {"rows_per_thread", {1, 2}, "ELL rows a thread sums, kBlock apart (1..4)"}}};
}

expert_template info4() {
  return {"hyb4",
          sparse_op::spmv,
          format_kind::hyb,
          "HYB with coo4's COO part: four entries a lane, 128-entry warp steps, streamed loads",
          {{"width",
            {0, 4, 8, 16, 32},
            "ELL slots per row (0 = the harness's automatic width); derived from the row lengths"}},
          {{"block", {256}, "threads per block of both entries (a multiple of 32)"},
           {"steps", {1, 4}, "128-entry COO steps per warp"},
           {"batch", {8}, "ELL slots of a row loaded together (1..16)"},
           {"rows_per_thread", {1, 2}, "ELL rows a thread sums, kBlock apart (1..4)"}}};
}

// The COO part's steps per warp: 32-entry steps (hyb), 128-entry steps of four a lane (hyb4).
const char* const steps_32 =
    "constexpr int kSteps = SPARSERL_SPMV_HYB_COO_NNZ_PER_BLOCK / kBlock;  // 32-entry COO "
    "chunks per warp";
const char* const steps_128 =
    "constexpr int kSteps = SPARSERL_SPMV_HYB_COO_NNZ_PER_BLOCK / (4 * kBlock);  // 128-entry "
    "COO steps per warp";

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
@STEPS@

constexpr int kBatch = @batch@;                  // ELL slots of a row in flight
constexpr int kRowsPerThread = SPARSERL_ROWS_PER_BLOCK / kBlock;  // ELL rows of a thread, kBlock apart

extern "C" __global__ void spmv_hyb_ell(@ARGS@) {
  const long long first = (long long)blockIdx.x * (kBlock * kRowsPerThread) + threadIdx.x;
  float sum[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) sum[r] = 0.0f;
  // kBatch slots of kRowsPerThread rows at a time: their index and value loads (the value is
  // loaded whatever the index: padding holds 0), then their x gathers, are independent, so a
  // thread keeps many loads in flight instead of one (a break per slot serialises them).
  for (int j0 = 0; j0 < width; j0 += kBatch) {
    int c[kRowsPerThread][kBatch];
    float a[kRowsPerThread][kBatch];
    bool more = false;
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const long long row = first + (long long)r * kBlock;
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const size_t at = (size_t)(j0 + u) * rows + row;
        const bool slot = row < rows && j0 + u < width;
        c[r][u] = slot ? ell_col_idx[at] : -1;  // a row fills its first slots: -1 is padding
        a[r][u] = slot ? ell_values[at] : 0.0f;
      }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
#pragma unroll
      for (int u = 0; u < kBatch; ++u) sum[r] += c[r][u] >= 0 ? a[r][u] * __ldg(&x[c[r][u]]) : 0.0f;
      more |= c[r][kBatch - 1] >= 0;
    }
    if (!more) break;  // every row ended inside this batch
  }
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const long long row = first + (long long)r * kBlock;
    if (row < rows) y[row] = sum[r];
  }
}
@SEGMENT@)";

// Width 0 lets the harness take the ceil(rows / 3)-th longest row (a percentile the features
// lack); the others bracket the mean. mean + std is capped at 2 x mean: a few huge rows inflate
// std and would pad every row up to it.
std::vector<int64_t> ell_widths(const matrix_features& f) {
  std::vector<int64_t> widths = {0};
  for (double w :
       {f.row_length_mean, std::min(f.row_length_mean + f.row_length_std, 2 * f.row_length_mean)}) {
    const int64_t width = clamp64(static_cast<int64_t>(std::ceil(w)), 1, f.row_length_max);
    if (std::find(widths.begin(), widths.end(), width) == widths.end()) widths.push_back(width);
  }
  return widths;
}

std::vector<expert_config> space(const matrix_features& f, int) {
  // HYB pays when a few long rows would blow up ELL: ELL width near the typical row, the tail
  // in COO.
  std::vector<expert_config> out;
  if (f.nnz == 0 || f.ell_padding_ratio <= 1.5) return out;
  const std::vector<int64_t> widths = ell_widths(f);
  // The COO part holds the long rows' tails: with very long rows, 16 steps per warp cut the
  // same-address atomics 4x (as in the COO space); on the H200 circuit matrix (rows of 400k)
  // 16 steps ran 1.18x faster than 4, so rows 16x longer get 64 too.
  std::vector<int64_t> steps_values = {1, 4};
  if (f.row_length_max > long_tail_row) steps_values.push_back(16);
  if (f.row_length_max > 16 * long_tail_row) steps_values.push_back(64);
  auto add = [&](int64_t width, int64_t steps, int64_t batch, int64_t rows) {
    out.push_back(make_config(
        info(), {{"width", width}},
        {{"block", 256}, {"steps", steps}, {"batch", batch}, {"rows_per_thread", rows}}));
  };
  for (int64_t width : widths) {
    for (int64_t steps : steps_values) add(width, steps, 4, 1);
    // Deeper ELL streams, with the COO steps the heuristic would take.
    const int64_t steps = f.row_length_max > long_tail_row ? 16 : 4;
    add(width, steps, 8, 1);
    add(width, steps, 4, 2);
    add(width, steps, 8, 2);
  }
  return out;
}

// hyb4 where HYB is offered, with the deeper ELL batch and both COO depths.
std::vector<expert_config> space4(const matrix_features& f, int) {
  std::vector<expert_config> out;
  if (f.nnz == 0 || f.ell_padding_ratio <= 1.5) return out;
  for (int64_t width : ell_widths(f))
    for (int64_t steps : {1, 4})
      out.push_back(
          make_config(info4(), {{"width", width}},
                      {{"block", 256}, {"steps", steps}, {"batch", 8}, {"rows_per_thread", 2}}));
  return out;
}

// `per_lane` entries a lane in the COO part: 1 (hyb) or 4 (hyb4).
kernel_program emit_hyb(const expert_config& c, int per_lane) {
  const int64_t block = c.param("block"), steps = c.param("steps");
  require_block(c, block);
  require(steps >= 1 && steps * per_lane <= 1024, c,
          "steps must be 1.." + std::to_string(1024 / per_lane));
  require(c.format_param("width") >= 0, c, "width must be >= 0");
  require(c.param("batch") >= 1 && c.param("batch") <= 16, c, "batch must be 1..16");
  const int64_t rows = c.param("rows_per_thread");
  require(rows >= 1 && rows <= 4, c, "rows_per_thread must be 1..4");
  const std::string args = entry_args(sparse_op::spmv, format_kind::hyb);
  auto values = as_text(c.params);
  values["ARGS"] = args;
  values["STEPS"] = per_lane == 4 ? steps_128 : steps_32;
  values["SEGMENT"] = coo_segment(per_lane, "spmv_hyb_coo", args, "coo_");
  kernel_program p;
  p.launches = {rows_launch("spmv_hyb_ell", block, block * rows),
                nnz_launch("spmv_hyb_coo", block, block * per_lane * steps)};
  p.source = fill(source, values);
  return p;
}

kernel_program emit(const expert_config& c) { return emit_hyb(c, 1); }
kernel_program emit4(const expert_config& c) { return emit_hyb(c, 4); }

}  // namespace

family hyb_spmv() { return {info(), space, emit}; }
family hyb4_spmv() { return {info4(), space4, emit4}; }

}  // namespace sparserl::expert_detail
