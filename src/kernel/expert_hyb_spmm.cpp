// HYB SpMM, the nnz-split design for skewed rows (after RoDe / GE-SpMM): the harness's HYB
// conversion cuts every row at `width` nonzeros, which is the split threshold.
//  * spmm_hyb_ell, the short rows and every row's head: a group of `group` lanes owns one row
//    and a `tile`-wide piece of C (grid.y = ceil(k / tile)), as csr_rowgroup; it reads the row's
//    ELL slots four at a time, so four B rows are in flight per group, and stores the sum: this
//    entry writes every element of C (rows with no ELL entries store 0).
//  * spmm_hyb_coo, the long rows' tails (entries past `width`, sorted by row): each lane group
//    takes `chunk` consecutive entries, so a row of 10^5 nonzeros is spread evenly over
//    thousands of groups. The group loads `group` entries with one coalesced access, hands them
//    around by shuffles, keeps four B rows in flight, accumulates a tile-wide partial of the row
//    and adds it to C with one atomicAdd per element when the row changes (a long row costs one
//    flush per chunk, not per entry).
// B rows are read as float4 (16 bytes a lane, coalesced across the group's tile) when vec = 4
// and k % 4 == 0 at run time; scalar accesses otherwise.
#include <algorithm>
#include <cmath>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"hyb_split",
          sparse_op::spmm,
          format_kind::hyb,
          "ELL heads a lane group per row (writes C); long-row tails split into equal nonzero "
          "chunks per lane group, tile partials added by atomics; float4 B rows",
          {{"width",
            {0, 8, 16, 32},
            "ELL slots per row = the split threshold (0 = the harness's automatic width); "
            "derived from the mean row length"}},
          {{"block", {128, 256}, "threads per block of both entries (a multiple of 32)"},
           {"group", {2, 8, 16, 32}, "lanes per row / per COO chunk (a power of two <= 32)"},
           {"tile", {8, 32, 64, 128}, "columns of C per block (k_per_block of both entries)"},
           {"vec", {1, 4}, "floats per lane access (4 = float4)"},
           {"chunk", {32, 128}, "COO entries per lane group (spmm_hyb_coo's nnz split)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kGroup = kBlock / SPARSERL_ROWS_PER_BLOCK;  // lanes per row (ELL) and per COO chunk
constexpr int kTile = SPARSERL_K_PER_BLOCK;  // columns of C per block
constexpr int kVec = @vec@;
constexpr int kSteps = kTile / (kGroup * kVec);
constexpr int kAcc = kSteps * kVec;  // accumulators per lane
constexpr int kGroupsPerBlock = SPARSERL_ROWS_PER_BLOCK;
constexpr int kChunk = @chunk@;  // COO entries per lane group
constexpr int kBatch = 4;        // B rows in flight per group
@TILE@
// Adds this lane's columns (the tile_store layout) to a row of C; columns past k are skipped.
__device__ __forceinline__ void tile_atomic_add(const float (&t)[kAcc], float* __restrict__ row,
                                                int col0, int k) {
#pragma unroll
  for (int s = 0; s < kSteps; ++s)
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const int c = col0 + s * kGroup * kVec + v;
      if (c < k) atomicAdd(row + c, t[s * kVec + v]);
    }
}

extern "C" __global__ void spmm_hyb_ell(@ARGS@) {
  const int lane = threadIdx.x % kGroup;
  const long long row = (long long)blockIdx.x * kGroupsPerBlock + threadIdx.x / kGroup;
  if (row >= rows) return;  // whole groups leave together
  const int col0 = blockIdx.y * kTile + lane * kVec;
  float acc[kAcc] = {};
  float b[kBatch][kAcc];
  for (int j0 = 0; j0 < width; j0 += kBatch) {
    int col[kBatch];
    float a[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const size_t at = (size_t)(j0 + u) * rows + row;
      col[u] = j0 + u < width ? ell_col_idx[at] : -1;  // -1: padding, the row has ended
      a[u] = col[u] >= 0 ? ell_values[at] : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      if (col[u] >= 0) {
        tile_load(b[u], B + (size_t)col[u] * k, col0, k);
      } else {
#pragma unroll
        for (int q = 0; q < kAcc; ++q) b[u][q] = 0.0f;
      }
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
#pragma unroll
      for (int q = 0; q < kAcc; ++q) acc[q] += a[u] * b[u][q];
    if (col[kBatch - 1] < 0) break;  // the row ended inside this batch
  }
  tile_store(acc, C + (size_t)row * k, col0, k);
}

extern "C" __global__ void spmm_hyb_coo(@ARGS@) {
  const int lane = threadIdx.x % kGroup;
  const long long first =
      ((long long)blockIdx.x * kGroupsPerBlock + threadIdx.x / kGroup) * kChunk;
  if (first >= coo_nnz) return;  // whole groups leave together
  const int last = (int)min(first + kChunk, (long long)coo_nnz);
  const int col0 = blockIdx.y * kTile + lane * kVec;
  // This thread's group's lanes, the shuffles' mask.
  const unsigned mask = (0xffffffffu >> (32 - kGroup)) << ((threadIdx.x & 31) & ~(kGroup - 1));
  float acc[kAcc] = {};
  float b[kBatch][kAcc];
  int row = coo_row_idx[first];  // the row the partial in acc belongs to
  for (int base = (int)first; base < last; base += kGroup) {
    const int n = min(kGroup, last - base);
    int my_row = 0, my_col = 0;
    float my_val = 0.0f;
    if (lane < n) {
      my_row = coo_row_idx[base + lane];
      my_col = coo_col_idx[base + lane];
      my_val = coo_values[base + lane];
    }
    for (int t0 = 0; t0 < n; t0 += kBatch) {
      int r[kBatch];
      float a[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {  // every lane of the group takes every shuffle
        const int src = (t0 + u) & (kGroup - 1);
        r[u] = __shfl_sync(mask, my_row, src, kGroup);
        const int col = __shfl_sync(mask, my_col, src, kGroup);
        a[u] = __shfl_sync(mask, my_val, src, kGroup);
        if (t0 + u < n) {
          tile_load(b[u], B + (size_t)col * k, col0, k);
        } else {
#pragma unroll
          for (int q = 0; q < kAcc; ++q) b[u][q] = 0.0f;
        }
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        if (t0 + u >= n) break;  // group-uniform
        if (r[u] != row) {       // entries are sorted by row: the partial of `row` is complete
          tile_atomic_add(acc, C + (size_t)row * k, col0, k);
#pragma unroll
          for (int q = 0; q < kAcc; ++q) acc[q] = 0.0f;
          row = r[u];
        }
#pragma unroll
        for (int q = 0; q < kAcc; ++q) acc[q] += a[u] * b[u][q];
      }
    }
  }
  tile_atomic_add(acc, C + (size_t)row * k, col0, k);
}
)";

// The explicit split threshold: ceil(2 x mean row length) ELL slots (a typical short row stays
// whole in ELL and only long rows spill), or 0 (automatic) when that would pad the ELL part beyond
// 3 x nnz slots.
int64_t split_width(const matrix_features& f) {
  if (f.nnz == 0) return 0;
  const int64_t width = clamp64(static_cast<int64_t>(std::ceil(2 * f.row_length_mean)), 1,
                                std::max<int32_t>(1, f.row_length_max));
  return static_cast<double>(f.rows) * width <= 3.0 * static_cast<double>(f.nnz) ? width : 0;
}

std::vector<expert_config> space(const matrix_features& f, int k) {
  // Only for skewed rows: on even rows csr_rowgroup reads the same bytes without the padding
  // and the second launch.
  std::vector<expert_config> out;
  if (f.nnz == 0 || !skewed_rows(f)) return out;
  std::vector<int64_t> widths = {0};
  const int64_t wide = split_width(f);
  if (wide != 0) widths.push_back(wide);
  const int64_t tile = std::min<int64_t>(spmm_tiles(k).front(), 128);
  std::vector<int64_t> groups;
  for (int64_t per_lane : {4, 8}) {  // one or two float4 per lane and B row
    const int64_t group = clamp64(tile / per_lane, 1, 32);
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
  }
  for (int64_t width : widths)
    for (int64_t group : groups)
      for (int64_t chunk : {32, 128})
        out.push_back(make_config(info(), {{"width", width}},
                                  {{"block", 256},
                                   {"group", group},
                                   {"tile", tile},
                                   {"vec", tile_vec(group, tile, k)},
                                   {"chunk", chunk}}));
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), group = c.param("group"), tile = c.param("tile");
  const int64_t chunk = c.param("chunk");
  require_block(c, block);
  check_tile(c, group, tile, c.param("vec"), 16);
  require(chunk >= 1 && chunk <= (1 << 20), c, "chunk must be 1..2^20");
  require(c.format_param("width") >= 0, c, "width must be >= 0");
  auto values = as_text(c.params);
  values["ARGS"] = entry_args(sparse_op::spmm, format_kind::hyb);
  values["TILE"] = spmm_tile_source(c.param("vec"));
  launch_spec coo = nnz_launch("spmm_hyb_coo", block, block / group * chunk);
  coo.k_per_block = tile;
  kernel_program p;
  p.launches = {rows_launch("spmm_hyb_ell", block, block / group, tile), coo};
  p.source = fill(source, values);
  return p;
}

}  // namespace

family hyb_spmm() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
