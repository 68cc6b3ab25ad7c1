// BSR SpMM: a lane group per block row covering a tile of C's columns; for each r x c block and
// each of its columns jj the group loads one tile-wide piece of a row of B once and uses it for
// all r rows of the block (r accumulator rows per lane). Block columns past the matrix are
// skipped, so B is never read out of bounds.
#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"bsr_rowgroup",
          sparse_op::spmm,
          format_kind::bsr,
          "a lane group per block row, k-tile per block column; each B row piece feeds r rows",
          {{"r", {2, 3, 4, 6, 8}, "block rows (1..64)"},
           {"c", {2, 3, 4, 6, 8}, "block columns (1..64)"}},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"group", {8, 32}, "lanes per block row (a power of two <= 32)"},
           {"tile", {32, 64, 128}, "columns of C per block (k_per_block)"},
           {"vec", {1, 4}, "floats per lane access (4 = float4)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kR = SPARSERL_BLOCK_R, kC = SPARSERL_BLOCK_C;  // block shape, as in the FORMAT line
constexpr int kGroup = kBlock / SPARSERL_ROWS_PER_BLOCK;  // lanes per block row
constexpr int kTile = SPARSERL_K_PER_BLOCK;  // columns of C per block
constexpr int kVec = @vec@;
constexpr int kSteps = kTile / (kGroup * kVec);
constexpr int kAcc = kSteps * kVec;  // accumulators per lane and block row
constexpr int kBlockRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;
@TILE@
extern "C" __global__ void spmm_bsr(@ARGS@) {
  const int lane = threadIdx.x % kGroup;
  const long long br = (long long)blockIdx.x * kBlockRowsPerBlock + threadIdx.x / kGroup;
  if (br >= block_rows) return;  // whole groups leave together
  const int col0 = blockIdx.y * kTile + lane * kVec;
  float acc[kR][kAcc] = {};
  float b[kAcc];
  const int end = block_row_ptr[br + 1];
  for (int blk = block_row_ptr[br]; blk < end; ++blk) {
    const int bcol0 = block_col_idx[blk] * kC;
    const float* __restrict__ v = values + (size_t)blk * (kR * kC);
#pragma unroll
    for (int jj = 0; jj < kC; ++jj) {
      if (bcol0 + jj >= cols) break;  // the block reaches past the matrix: cells are 0
      tile_load(b, B + (size_t)(bcol0 + jj) * k, col0, k);
#pragma unroll
      for (int i = 0; i < kR; ++i) {
        const float a = v[i * kC + jj];
#pragma unroll
        for (int q = 0; q < kAcc; ++q) acc[i][q] += a * b[q];
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kR; ++i) {
    const long long row = br * kR + i;
    if (row < rows) tile_store(acc[i], C + (size_t)row * k, col0, k);
  }
}
)";

std::vector<expert_config> space(const matrix_features& f, int k) {
  // As BSR SpMV: only square blocks whose measured fill is high.
  std::vector<expert_config> out;
  for (int64_t b : bsr_block_sizes(f)) {
    for (int64_t group : {8, 32})
      if (const int64_t tile = bsr_spmm_tile(b, group, k))
        out.push_back(make_config(
            info(), {{"r", b}, {"c", b}},
            {{"block", 256}, {"group", group}, {"tile", tile}, {"vec", tile_vec(group, tile, k)}}));
  }
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), group = c.param("group"), tile = c.param("tile");
  const int64_t r = c.format_param("r"), cc = c.format_param("c");
  require_block(c, block);
  require(r >= 1 && r <= 64 && cc >= 1 && cc <= 64, c, "r and c must be 1..64");
  check_tile(c, group, tile, c.param("vec"), 64);
  require(r * (tile / group) <= 64, c, "r * tile / group must be <= 64 (accumulators per lane)");
  auto values = as_text(c.params);
  values["ARGS"] = entry_args(sparse_op::spmm, format_kind::bsr);
  values["TILE"] = spmm_tile_source(c.param("vec"));
  kernel_program p;
  p.launches = {rows_launch("", block, block / group, tile)};
  p.source = fill(source, values);
  return p;
}

}  // namespace

int64_t bsr_spmm_tile(int64_t r, int64_t group, int k) {
  for (int64_t tile : spmm_tiles(k))  // largest first
    if (tile >= group && r * tile / group <= 32) return tile;
  return 0;
}

family bsr_spmm() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
