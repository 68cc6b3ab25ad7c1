// ELL and SELL-C-sigma SpMM, row per lane group: as csr_rowgroup (expert_csr_spmm.cpp), with the
// row's nonzeros read from the padded slots; the first padding slot ends the row (a row fills
// its first slots), so B is never indexed with col -1. SELL writes through perm.
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

std::vector<expert_param> group_params() {
  return {{"block", {128, 256}, "threads per block (a multiple of 32)"},
          {"group", {2, 8, 32}, "lanes per row (a power of two <= 32)"},
          {"tile", {8, 32, 64, 128, 256}, "columns of C per block (k_per_block)"},
          {"vec", {1, 4}, "floats per lane access (4 = float4)"}};
}

expert_template ell_info() {
  return {"ell_rowgroup",
          sparse_op::spmm,
          format_kind::ell,
          "a lane group per row over the column-major slots, k-tile per block column",
          {},
          group_params()};
}

expert_template sell_info() {
  return {"sell_rowgroup",
          sparse_op::spmm,
          format_kind::sell,
          "a lane group per sorted row position, k-tile per block column, stores through perm",
          {{"C", {8, 32}, "slice height (a power of two <= 1024)"},
           {"sigma", {1, 4096}, "sorting window in rows (1 = no sorting)"}},
          group_params()};
}

const char* const head = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kGroup = kBlock / SPARSERL_ROWS_PER_BLOCK;  // lanes per row
constexpr int kTile = SPARSERL_K_PER_BLOCK;  // columns of C per block
constexpr int kVec = @vec@;
constexpr int kSteps = kTile / (kGroup * kVec);
constexpr int kAcc = kSteps * kVec;  // accumulators per lane
constexpr int kRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;
)";

const char* const ell_body = R"(
extern "C" __global__ void spmm_ell(@ARGS@) {
  const int lane = threadIdx.x % kGroup;
  const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kGroup;
  if (row >= rows) return;  // whole groups leave together
  const int col0 = blockIdx.y * kTile + lane * kVec;
  float acc[kAcc] = {};
  float b[kAcc];
  for (int j = 0; j < width; ++j) {
    const size_t at = (size_t)j * rows + row;
    const int col = col_idx[at];
    if (col < 0) break;  // the rest of the row is padding
    const float a = values[at];
    tile_load(b, B + (size_t)col * k, col0, k);
#pragma unroll
    for (int q = 0; q < kAcc; ++q) acc[q] += a * b[q];
  }
  tile_store(acc, C + (size_t)row * k, col0, k);
}
)";

const char* const sell_body = R"(
constexpr int kC = SPARSERL_C;  // slice height, as in the FORMAT line

extern "C" __global__ void spmm_sell(@ARGS@) {
  const int lane = threadIdx.x % kGroup;
  const long long pos = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kGroup;
  if (pos >= rows) return;  // whole groups leave together
  const int slice = (int)(pos / kC), in_slice = (int)(pos % kC);
  const int width = slice_width[slice];
  const int col0 = blockIdx.y * kTile + lane * kVec;
  float acc[kAcc] = {};
  float b[kAcc];
  size_t at = (size_t)slice_ptr[slice] + in_slice;
  for (int j = 0; j < width; ++j, at += kC) {
    const int col = col_idx[at];
    if (col < 0) break;  // the rest of the row is padding
    const float a = values[at];
    tile_load(b, B + (size_t)col * k, col0, k);
#pragma unroll
    for (int q = 0; q < kAcc; ++q) acc[q] += a * b[q];
  }
  tile_store(acc, C + (size_t)perm[pos] * k, col0, k);
}
)";

std::vector<expert_config> ell_space(const matrix_features& f, int k) {
  std::vector<expert_config> out;
  if (f.nnz > 0 && f.ell_padding_ratio > 3) return out;  // as ELL SpMV: padding dominates
  for (auto& params : rowgroup_configs(k)) out.push_back(make_config(ell_info(), {}, params));
  return out;
}

std::vector<expert_config> sell_space(const matrix_features& f, int k) {
  std::vector<expert_config> out;
  const bool varied = f.row_length_std > 0.1 * std::max(1.0, f.row_length_mean);
  for (int64_t sigma : {1, 4096}) {
    if (sigma > 1 && !varied) continue;
    if (!sell_padding_bounded(f, 32, sigma)) continue;
    for (auto& params : rowgroup_configs(k))
      out.push_back(make_config(sell_info(), {{"C", 32}, {"sigma", sigma}}, params));
  }
  return out;
}

kernel_program emit_group(const expert_config& c, const char* body, format_kind format) {
  const int64_t block = c.param("block"), group = c.param("group"), tile = c.param("tile");
  require_block(c, block);
  check_tile(c, group, tile, c.param("vec"), 32);
  auto values = as_text(c.params);
  values["ARGS"] = entry_args(sparse_op::spmm, format);
  if (format == format_kind::sell) {
    const int64_t slice = c.format_param("C");
    require(is_pow2(slice) && slice <= 1024, c, "C must be a power of two <= 1024");
    require(c.format_param("sigma") >= 1, c, "sigma must be >= 1");
  }
  kernel_program p;
  p.launches = {rows_launch("", block, block / group, tile)};
  p.source = fill(std::string(head) + spmm_tile_source(c.param("vec")) + body, values);
  return p;
}

kernel_program ell_emit(const expert_config& c) {
  return emit_group(c, ell_body, format_kind::ell);
}
kernel_program sell_emit(const expert_config& c) {
  return emit_group(c, sell_body, format_kind::sell);
}

}  // namespace

family ell_spmm() { return {ell_info(), ell_space, ell_emit}; }
family sell_spmm() { return {sell_info(), sell_space, sell_emit}; }

}  // namespace sparserl::expert_detail
