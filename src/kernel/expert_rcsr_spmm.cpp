// RCSR SpMM: B gathered into the RCM numbering (work row p = B row perm[p], a warp per row), then
// csr_rowgroup on the reordered matrix without the shuffle cache (a lane group per row and a
// k-tile per block column) reading rows of work near the diagonal, writing C row perm[row].
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"rcsr_rowgroup",
          sparse_op::spmm,
          format_kind::rcsr,
          "B gathered into the RCM numbering, then a lane group per row of the reordered matrix "
          "and a k-tile per block column",
          {},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"group", {2, 8, 32}, "lanes per row (a power of two <= 32)"},
           {"tile", {8, 32, 64, 128, 256}, "columns of C per block (k_per_block)"},
           {"vec", {1, 4}, "floats per lane access (4 = float4)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kGroup = kBlock / SPARSERL_SPMM_RCSR_ROWS_PER_BLOCK;  // lanes per row
constexpr int kTile = SPARSERL_K_PER_BLOCK;  // columns of C per block
constexpr int kVec = @vec@;
constexpr int kSteps = kTile / (kGroup * kVec);
constexpr int kAcc = kSteps * kVec;  // accumulators per lane
constexpr int kRowsPerBlock = SPARSERL_SPMM_RCSR_ROWS_PER_BLOCK;
constexpr int kGatherRows = kBlock / 32;  // a warp copies a row
@TILE@
// B in the new numbering: row p of work is row perm[p] of B, a warp per row and k-tile
// (coalesced), the same tiles as the product's.
extern "C" __global__ void spmm_rcsr_gather(@ARGS@) {
  const long long p = (long long)blockIdx.x * kGatherRows + threadIdx.x / 32;
  if (p >= rows) return;
  const float* __restrict__ from = B + (size_t)perm[p] * k;
  float* __restrict__ to = work + (size_t)p * k;
  const int end = min(k, (int)(blockIdx.y + 1) * kTile);
  for (int t = blockIdx.y * kTile + threadIdx.x % 32; t < end; t += 32) to[t] = __ldg(&from[t]);
}

extern "C" __global__ void spmm_rcsr(@ARGS@) {
  const int lane = threadIdx.x % kGroup;
  const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kGroup;
  if (row >= rows) return;  // whole groups leave together
  const int col0 = blockIdx.y * kTile + lane * kVec;
  const int begin = row_ptr[row], end = row_ptr[row + 1];
  float acc[kAcc] = {};
  float b[kAcc];
  for (int i = begin; i < end; ++i) {
    const float a = values[i];
    // work was written by the previous launch and is only read here (tile_load uses __ldg).
    tile_load(b, work + (size_t)col_idx[i] * k, col0, k);
#pragma unroll
    for (int q = 0; q < kAcc; ++q) acc[q] += a * b[q];
  }
  tile_store(acc, C + (size_t)perm[row] * k, col0, k);
}
)";

std::vector<expert_config> space(const matrix_features& f, int k) {
  // csr16_rowgroup's tiles and groups; only square matrices can be renumbered symmetrically, and
  // only a random order pays for the gather (rcsr_order_pays).
  std::vector<expert_config> out;
  if (!rcsr_order_pays(f)) return out;
  for (const auto& params : rowgroup_configs(k)) out.push_back(make_config(info(), {}, params));
  return out;
}

kernel_program emit(const expert_config& c) {
  // The row-group product, with the gather launched before it (a warp per row and k-tile).
  kernel_program p = emit_rowgroup(c, format_kind::rcsr, source);
  const int64_t block = c.param("block"), tile = c.param("tile");
  p.launches = {rows_launch("spmm_rcsr_gather", block, block / 32, tile),
                rows_launch("spmm_rcsr", block, block / c.param("group"), tile)};
  return p;
}

}  // namespace

family rcsr_rowgroup_spmm() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
