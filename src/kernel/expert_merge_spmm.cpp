// Merge-path CSR SpMM, the nnz-split design for skewed rows: the same two-level decomposition as
// csr_merge SpMV (blocks own whole rows of an equal cut of rows + nonzeros; see
// expert_merge_spmv.cpp), with a warp as the unit inside the block. A warp walks its equal share
// of the block's rows + nonzeros, keeping a tile-wide row of C across its lanes; rows it
// completes are stored, the row open at the end of its share is a carry in shared memory, and
// after one barrier the warp completing a row adds the carries of the warps before it. Every
// element of C is written exactly once, no atomics.
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"csr_merge",
          sparse_op::spmm,
          format_kind::csr,
          "merge-path: equal rows+nonzeros per block (whole rows) and per warp, tile-wide "
          "carries fixed up in shared memory",
          {},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"tile",
            {32, 64, 128, 256},
            "columns of C per block (k_per_block), a multiple of "
            "32 * vec, <= 256"},
           {"vec", {1, 4}, "floats per lane access (4 = float4)"},
           {"rows_per_block",
            {16, 64, 256},
            "sets the grid (ceil(rows / n) blocks); derived as warps * items_per_warp / "
            "(1 + mean row length)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kWarps = kBlock / 32;
constexpr int kGroup = 32;       // lanes sharing one row of C
constexpr int kTile = SPARSERL_K_PER_BLOCK;  // columns of C per block
constexpr int kVec = @vec@;
constexpr int kSteps = kTile / (kGroup * kVec);
constexpr int kAcc = kSteps * kVec;
@MERGE_SEARCH@@TILE@
extern "C" __global__ void spmm_csr(@ARGS@) {
  __shared__ int bounds[2];
  __shared__ int carry_row[kWarps];
  __shared__ float carry_val[kWarps][kTile];
  merge_block_rows(row_ptr, rows, bounds);
  const int row_begin = bounds[0], row_end = bounds[1];
  if (row_begin >= row_end) return;  // uniform: no row ends in this cut

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int col0 = blockIdx.y * kTile + lane * kVec;
  const int nz_begin = row_ptr[row_begin];
  const int n_rows = row_end - row_begin;
  const int n_nnz = row_ptr[row_end] - nz_begin;
  const int* __restrict__ local_end = row_ptr + row_begin + 1;
  const long long items = (long long)n_rows + n_nnz;
  const long long share = (items + kWarps - 1) / kWarps;
  const long long d0 = min(share * warp, items);
  long long remaining = min(d0 + share, items) - d0;
  int r = merge_search(d0, local_end, nz_begin, n_rows, n_nnz);  // local row
  int j = (int)(d0 - r) + nz_begin;                               // global nonzero

  float acc[kAcc] = {}, first[kAcc] = {}, b[kAcc];
  int first_row = -1;  // the first row this warp completes: it may owe carries
  while (remaining > 0) {
    const int stop = r < n_rows ? local_end[r] : nz_begin + n_nnz;
    const int take = (int)min((long long)(stop - j), remaining);
    for (int t = 0; t < take; ++t) {
      const float a = values[j + t];
      tile_load(b, B + (size_t)col_idx[j + t] * k, col0, k);
#pragma unroll
      for (int q = 0; q < kAcc; ++q) acc[q] += a * b[q];
    }
    j += take;
    remaining -= take;
    if (remaining > 0) {  // the next item is row r's end: the row is complete here
      if (first_row < 0) {
        first_row = r;
#pragma unroll
        for (int q = 0; q < kAcc; ++q) first[q] = acc[q];
      } else {
        tile_store(acc, C + (size_t)(row_begin + r) * k, col0, k);
      }
#pragma unroll
      for (int q = 0; q < kAcc; ++q) acc[q] = 0.0f;
      ++r;
      --remaining;
    }
  }
  // The row still open where this warp's share ends, in tile-local columns.
#pragma unroll
  for (int s = 0; s < kSteps; ++s)
#pragma unroll
    for (int v = 0; v < kVec; ++v) carry_val[warp][s * kGroup * kVec + lane * kVec + v] = acc[s * kVec + v];
  if (lane == 0) carry_row[warp] = r;
  __syncthreads();
  if (first_row >= 0) {
    for (int w = warp - 1; w >= 0 && carry_row[w] == first_row; --w)
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int v = 0; v < kVec; ++v)
          first[s * kVec + v] += carry_val[w][s * kGroup * kVec + lane * kVec + v];
    tile_store(first, C + (size_t)(row_begin + first_row) * k, col0, k);
  }
}
)";

std::vector<expert_config> space(const matrix_features& f, int k) {
  // Pays on skewed rows; on even rows one config stays in as a cross-check of the others.
  std::vector<expert_config> out;
  const bool skewed = f.row_length_std > f.row_length_mean ||
                      f.row_length_max > 8 * std::max(1.0, f.row_length_mean);
  int tried = 0;
  for (int64_t tile : spmm_tiles(k)) {
    if (tile < 32 || tile > 128 || tried == (skewed ? 2 : 1)) continue;
    ++tried;
    for (int64_t per_warp : {16, 64}) {
      if (!skewed && per_warp != 64) continue;
      const int64_t rows = merge_spmm_rows_per_block(f, per_warp);
      out.push_back(make_config(info(), {},
                                {{"block", 256},
                                 {"tile", tile},
                                 {"vec", tile_vec(32, tile, k)},
                                 {"rows_per_block", rows}}));
    }
  }
  if (out.empty())  // k < 32: one lane per column still works
    out.push_back(make_config(info(), {},
                              {{"block", 256}, {"tile", 32}, {"vec", 1}, {"rows_per_block", 64}}));
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), tile = c.param("tile");
  require_block(c, block);
  check_tile(c, 32, tile, c.param("vec"), 8);
  require(c.param("rows_per_block") >= 1, c, "rows_per_block must be >= 1");
  require(block / 32 * tile * 4 <= 32 * 1024, c, "carries must fit 32 KiB of shared memory");
  auto values = as_text(c.params);
  values["ARGS"] = entry_args(sparse_op::spmm, format_kind::csr);
  values["MERGE_SEARCH"] = merge_search_source;
  values["TILE"] = spmm_tile_source(c.param("vec"));
  kernel_program p;
  p.launches = {rows_launch("", block, c.param("rows_per_block"), tile)};
  p.source = fill(source, values);
  return p;
}

}  // namespace

int64_t merge_spmm_rows_per_block(const matrix_features& f, int64_t per_warp) {
  return clamp64(static_cast<int64_t>(8 * per_warp / (1.0 + f.row_length_mean)), 1, 1 << 16);
}

family csr_merge_spmm() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
