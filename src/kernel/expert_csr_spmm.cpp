// CSR SpMM, row per lane group (after GE-SpMM's row-per-warp design): a group of `group` lanes
// owns one row of A and a `tile`-wide piece of C (grid.y = ceil(k / tile)); each nonzero of the
// row scales a piece of one row of B into the lanes' accumulators. Loads of B and stores of C
// are coalesced across the group and 16 bytes wide when vec = 4 (k % 4 == 0 at run time; the
// kernel falls back to scalar accesses otherwise). With cache = 1 the group first loads `group`
// nonzeros with one coalesced access and hands them around with shuffles (GE-SpMM's CRC).
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {

namespace {

const char* const tile_scalar = R"(
// This lane's columns: step s is column col0 + s * kGroup; columns past k read 0, never store.
__device__ __forceinline__ void tile_load(float (&t)[kAcc], const float* __restrict__ row,
                                          int col0, int k) {
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const int c = col0 + s * kGroup;
    t[s] = c < k ? __ldg(row + c) : 0.0f;
  }
}
__device__ __forceinline__ void tile_store(const float (&t)[kAcc], float* __restrict__ row,
                                           int col0, int k) {
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const int c = col0 + s * kGroup;
    if (c < k) row[c] = t[s];
  }
}
)";

const char* const tile_vector = R"(
// This lane's columns: step s covers columns col0 + s * kGroup * 4 + [0, 4). Rows of B and C are
// 16-byte aligned only when k % 4 == 0; otherwise scalar accesses. Columns past k read 0.
__device__ __forceinline__ void tile_load(float (&t)[kAcc], const float* __restrict__ row,
                                          int col0, int k) {
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const int c = col0 + s * kGroup * 4;
    if ((k & 3) == 0 && c < k) {
      const float4 b = __ldg(reinterpret_cast<const float4*>(row + c));
      t[4 * s] = b.x;
      t[4 * s + 1] = b.y;
      t[4 * s + 2] = b.z;
      t[4 * s + 3] = b.w;
    } else {
#pragma unroll
      for (int v = 0; v < 4; ++v) t[4 * s + v] = c + v < k ? __ldg(row + c + v) : 0.0f;
    }
  }
}
__device__ __forceinline__ void tile_store(const float (&t)[kAcc], float* __restrict__ row,
                                           int col0, int k) {
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const int c = col0 + s * kGroup * 4;
    if ((k & 3) == 0 && c < k) {
      *reinterpret_cast<float4*>(row + c) =
          make_float4(t[4 * s], t[4 * s + 1], t[4 * s + 2], t[4 * s + 3]);
    } else {
#pragma unroll
      for (int v = 0; v < 4; ++v)
        if (c + v < k) row[c + v] = t[4 * s + v];
    }
  }
}
)";

expert_template info() {
  return {"csr_rowgroup",
          sparse_op::spmm,
          format_kind::csr,
          "a lane group per row and a k-tile per block column; coalesced (float4) B rows",
          {},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"group", {2, 8, 32}, "lanes per row (a power of two <= 32)"},
           {"tile", {8, 32, 64, 128, 256}, "columns of C per block (k_per_block)"},
           {"vec", {1, 4}, "floats per lane access (4 = float4)"},
           {"cache", {0, 1}, "1 = load group nonzeros at once and broadcast them by shuffles"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kGroup = kBlock / SPARSERL_ROWS_PER_BLOCK;  // lanes per row
constexpr int kTile = SPARSERL_K_PER_BLOCK;  // columns of C per block
constexpr int kVec = @vec@;
constexpr int kSteps = kTile / (kGroup * kVec);
constexpr int kAcc = kSteps * kVec;  // accumulators per lane
constexpr int kRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;
@TILE@
extern "C" __global__ void spmm_csr(@ARGS@) {
  const int lane = threadIdx.x % kGroup;
  const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kGroup;
  if (row >= rows) return;  // whole groups leave together
  const int col0 = blockIdx.y * kTile + lane * kVec;
  const int begin = row_ptr[row], end = row_ptr[row + 1];
  float acc[kAcc] = {};
  float b[kAcc];
@LOOP@
  tile_store(acc, C + (size_t)row * k, col0, k);
}
)";

const char* const loop_direct = R"(  for (int i = begin; i < end; ++i) {
    const float a = values[i];
    tile_load(b, B + (size_t)col_idx[i] * k, col0, k);
#pragma unroll
    for (int q = 0; q < kAcc; ++q) acc[q] += a * b[q];
  })";

const char* const loop_cached = R"(  // This thread's group's lanes, the shuffles' mask.
  const unsigned mask = (0xffffffffu >> (32 - kGroup)) << ((threadIdx.x & 31) & ~(kGroup - 1));
  for (int base = begin; base < end; base += kGroup) {
    const int n = min(kGroup, end - base);
    int my_col = 0;
    float my_val = 0.0f;
    if (lane < n) {
      my_col = col_idx[base + lane];
      my_val = values[base + lane];
    }
    for (int t = 0; t < n; ++t) {
      const int col = __shfl_sync(mask, my_col, t, kGroup);
      const float a = __shfl_sync(mask, my_val, t, kGroup);
      tile_load(b, B + (size_t)col * k, col0, k);
#pragma unroll
      for (int q = 0; q < kAcc; ++q) acc[q] += a * b[q];
    }
  })";

std::vector<expert_config> space(const matrix_features&, int k) {
  std::vector<expert_config> out;
  for (std::map<std::string, int64_t> params : rowgroup_configs(k))
    for (int64_t cache : {0, 1}) {
      params["cache"] = cache;
      out.push_back(make_config(info(), {}, params));
    }
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), group = c.param("group"), tile = c.param("tile");
  require_block(c, block);
  check_tile(c, group, tile, c.param("vec"), 32);
  require(c.param("cache") == 0 || c.param("cache") == 1, c, "cache must be 0 or 1");
  auto values = as_text(c.params);
  values["ARGS"] = entry_args(sparse_op::spmm, format_kind::csr);
  values["TILE"] = spmm_tile_source(c.param("vec"));
  values["LOOP"] = c.param("cache") ? loop_cached : loop_direct;
  kernel_program p;
  p.launches = {rows_launch("", block, block / group, tile)};
  p.source = fill(source, values);
  return p;
}

}  // namespace

std::string spmm_tile_source(int64_t vec) { return vec == 4 ? tile_vector : tile_scalar; }

void check_tile(const expert_config& c, int64_t group, int64_t tile, int64_t vec, int64_t max_acc) {
  require(is_pow2(group) && group <= 32, c, "group must be a power of two <= 32");
  require(vec == 1 || vec == 4, c, "vec must be 1 or 4");
  require(tile >= group * vec && tile % (group * vec) == 0, c,
          "tile must be a positive multiple of group * vec");
  require(tile / group <= max_acc, c,
          "tile / group must be <= " + std::to_string(max_acc) + " (accumulators per lane)");
}

int64_t tile_vec(int64_t group, int64_t tile, int k) {
  return (tile / group) % 4 == 0 && k % 4 == 0 ? 4 : 1;
}

std::vector<int64_t> spmm_tiles(int k) {
  const int64_t kp = pow2_at_least(std::max(k, 1));
  if (kp < 32) return {std::max<int64_t>(kp, 2)};
  std::vector<int64_t> out;
  for (int64_t t : {256, 128, 64, 32})
    if (t <= kp) out.push_back(t);
  return out;
}

std::vector<std::map<std::string, int64_t>> rowgroup_configs(int k) {
  std::vector<std::map<std::string, int64_t>> out;
  const std::vector<int64_t> tiles = spmm_tiles(k);
  for (size_t t = 0; t < tiles.size() && t < 2; ++t)
    for (int64_t group : {2, 8, 32}) {
      const int64_t tile = tiles[t];
      if (group > tile || tile / group > 16) continue;
      out.push_back(
          {{"block", 256}, {"group", group}, {"tile", tile}, {"vec", tile_vec(group, tile, k)}});
    }
  return out;
}

kernel_program emit_rowgroup(const expert_config& c, format_kind format, const char* source) {
  const int64_t block = c.param("block"), group = c.param("group"), tile = c.param("tile");
  require_block(c, block);
  check_tile(c, group, tile, c.param("vec"), 32);
  auto values = as_text(c.params);
  values["ARGS"] = entry_args(sparse_op::spmm, format);
  values["TILE"] = spmm_tile_source(c.param("vec"));
  kernel_program p;
  p.launches = {rows_launch("", block, block / group, tile)};
  p.source = fill(source, values);
  return p;
}

family csr_rowgroup_spmm() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
