// Merge-path CSR SpMV over tiles staged in shared memory (Merrill & Garland, SC'16, as cuSPARSE's
// and CUB's merge-based SpMV), with rows that cross tiles met in module scratch.
//
// The merge path of (row ends, nonzeros) is cut into tiles of block * items items. A block takes a
// tile (grid-stride): half its threads find the row at the tile's start and half the row at its
// end with a block-wide search, then it copies the tile's row ends and its nonzeros' products
// (values * x, coalesced loads) into shared memory, and each thread walks `items` items of the
// tile from there, writing the rows it completes. Within the tile a thread's open row is a carry
// fixed up after one barrier, as in csr_merge.
//
// csr_merge keeps every row in one block, so a row of 10^5 nonzeros is summed by one block (circuit
// on the H100, 2026-12-07: 687 us against cuSPARSE's 57), and its threads read their nonzeros
// directly, a share each (about 2x cuSPARSE on every suite matrix). Here a row crossing tiles
// leaves each tile's share in a scratch slot (the index of the tile holding the row's first item,
// unique per crossing row), a fence, then a count; the share that completes the count writes y
// and zeroes the slot for the next launch (the "last block" reduction csr_split uses: y is
// poisoned and nothing orders blocks). A matrix with more tiles than `slots` writes nothing (so
// the checker refuses it; the space sizes slots to the matrix).
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {
      "csr_merge_tiles",
      sparse_op::spmv,
      format_kind::csr,
      "merge-path tiles of block * items row ends + nonzeros staged in shared memory; rows "
      "crossing tiles met by a last-block reduction in module scratch",
      {},
      {{"block", {128, 256}, "threads per block (a multiple of 32)"},
       {"items", {7, 9}, "merge items (row ends + nonzeros) a thread walks; block * items <= 4096"},
       {"slots", {1 << 16}, "scratch slots, at least the matrix's tiles (1..2^22)"},
       {"rows_per_block",
        {64, 256},
        "sets the grid (ceil(rows / n) blocks; they take tiles grid-stride); derived as "
        "block * items / (1 + mean row length), a block a tile"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kItems = @items@;          // merge items a thread walks
constexpr int kTile = kBlock * kItems;   // merge items a tile
constexpr int kHalf = kBlock / 2;
constexpr int kSlots = @slots@;
constexpr int kStageBatch = kItems < 8 ? kItems : 8;  // staging loads a thread has in flight

__device__ float tile_share_sum[kSlots];  // zero at load; each launch leaves it zero
__device__ unsigned int tile_share_count[kSlots];

@MERGE_SEARCH@

// Whether the merge path at `diagonal` has taken row r's end (its nonzeros come first).
__device__ __forceinline__ bool passed(const int* __restrict__ row_ptr, int r, long long diagonal) {
  return (long long)row_ptr[r + 1] <= diagonal - r - 1;
}

// The merge path's rows at diagonals d0 (range[0]) and d1 (range[2]): each half of the block
// narrows one range kHalf-fold a round. Every thread calls it (it has barriers).
__device__ void tile_rows(const int* __restrict__ row_ptr, int rows, int nnz, long long d0,
                          long long d1, int* range) {
  const int which = threadIdx.x / kHalf, t = threadIdx.x % kHalf;
  const long long diagonal = which ? d1 : d0;
  if (t == 0) {
    range[2 * which] = (int)max(diagonal - nnz, 0LL);  // the row lies in [lo, hi]
    range[2 * which + 1] = (int)min(diagonal, (long long)rows);
  }
  __syncthreads();
  while (true) {
    const int lo = range[2 * which], hi = range[2 * which + 1];
    const bool more = range[0] < range[1] || range[2] < range[3];
    __syncthreads();  // all have read the ranges before one thread moves them
    if (!more) break;
    if (lo < hi) {
      const int step = (hi - lo + kHalf - 1) / kHalf;
      const int p = lo + t * step;
      if (p < hi) {
        const bool here = passed(row_ptr, p, diagonal);
        const bool next = p + step < hi && passed(row_ptr, p + step, diagonal);
        if (t == 0 && !here) range[2 * which + 1] = lo;  // not even row lo has ended
        if (here && !next) {  // exactly one probe is the last passed one
          range[2 * which] = p + 1;
          range[2 * which + 1] = min(p + step, hi);
        }
      }
    }
    __syncthreads();
  }
}

// This tile's share of a row that crosses tiles; the last share to arrive writes y[row].
__device__ void add_share(const int* __restrict__ row_ptr, float* __restrict__ y, int row,
                          float share) {
  const long long slot = ((long long)row + row_ptr[row]) / kTile;  // the tile of its first item
  const long long end = ((long long)row + row_ptr[row + 1]) / kTile;  // the tile of its end
  atomicAdd(&tile_share_sum[slot], share);
  __threadfence();  // the share is visible before the count says so
  if (atomicAdd(&tile_share_count[slot], 1u) == (unsigned int)(end - slot)) {
    y[row] = atomicExch(&tile_share_sum[slot], 0.0f);
    tile_share_count[slot] = 0;
  }
}

extern "C" __global__ void spmv_csr(@ARGS@) {
  __shared__ int range[4];
  __shared__ int row_end[kTile];
  __shared__ float product[kTile];
  __shared__ int carry_row[kBlock];
  __shared__ float carry_val[kBlock];
  const long long total = (long long)rows + nnz;
  const long long tiles = (total + kTile - 1) / kTile;
  if (tiles > kSlots) return;  // scratch too small: y stays poisoned, so the result is refused
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const long long d0 = tile * kTile, d1 = min(d0 + kTile, total);
    tile_rows(row_ptr, rows, nnz, d0, d1, range);
    const int ra = range[0], rb = range[2];  // the tile holds the ends of rows [ra, rb)
    const int ja = (int)(d0 - ra);           // and nonzeros [ja, ja + n_nnz)
    const int n_rows = rb - ra, n_nnz = (int)(d1 - rb) - ja;
    for (int i = threadIdx.x; i < n_rows; i += kBlock) row_end[i] = row_ptr[ra + 1 + i];
    // Columns and values of a batch in flight together, then their x, then the stores: a
    // load-store loop would wait on two loads an item.
    for (int i0 = 0; i0 < n_nnz; i0 += kStageBatch * kBlock) {
      int col[kStageBatch];
      float value[kStageBatch], x_col[kStageBatch];
#pragma unroll
      for (int s = 0; s < kStageBatch; ++s) {
        const int i = i0 + s * kBlock + (int)threadIdx.x;
        col[s] = i < n_nnz ? col_idx[ja + i] : 0;
        value[s] = i < n_nnz ? values[ja + i] : 0.0f;
      }
#pragma unroll
      for (int s = 0; s < kStageBatch; ++s) x_col[s] = __ldg(&x[col[s]]);
#pragma unroll
      for (int s = 0; s < kStageBatch; ++s) {
        const int i = i0 + s * kBlock + (int)threadIdx.x;
        if (i < n_nnz) product[i] = value[s] * x_col[s];
      }
    }
    __syncthreads();

    const int first = min((int)threadIdx.x * kItems, n_rows + n_nnz);
    const int last = min(first + kItems, n_rows + n_nnz);
    int r = merge_search(first, row_end, ja, n_rows, n_nnz);  // tile-local row and nonzero
    int j = first - r;
    float sum = 0.0f, first_sum = 0.0f;
    int first_row = -1;  // the first row this thread completes: it may owe carries
    for (int d = first; d < last; ++d) {
      if (r < n_rows && ja + j >= row_end[r]) {  // row r's end
        if (first_row < 0) {
          first_row = r;
          first_sum = sum;
        } else {
          y[ra + r] = sum;  // began in this thread's share
        }
        sum = 0.0f;
        ++r;
      } else {
        sum += product[j++];
      }
    }
    carry_row[threadIdx.x] = r;  // the row still open where this thread's share ends
    carry_val[threadIdx.x] = sum;
    __syncthreads();
    if (first_row >= 0) {
      for (int t = (int)threadIdx.x - 1; t >= 0 && carry_row[t] == first_row; --t)
        first_sum += carry_val[t];
      const int row = ra + first_row;
      if ((long long)row + row_ptr[row] < d0) add_share(row_ptr, y, row, first_sum);
      else y[row] = first_sum;
    }
    // Row rb, open at the tile's end, has a share here when it began before d1.
    if (threadIdx.x == kBlock - 1 && rb < rows && (long long)rb + row_ptr[rb] < d1) {
      float share = 0.0f;
      for (int t = kBlock - 1; t >= 0 && carry_row[t] == n_rows; --t) share += carry_val[t];
      add_share(row_ptr, y, rb, share);
    }
    __syncthreads();  // the shared arrays are reused by the next tile
  }
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  std::vector<expert_config> out;
  const double items_total = static_cast<double>(f.rows) + static_cast<double>(f.nnz);
  for (const auto& [block, items] : {std::pair<int64_t, int64_t>{128, 7}, {256, 9}}) {
    const double tile = static_cast<double>(block * items);
    const int64_t tiles = static_cast<int64_t>(items_total / tile) + 1;
    const int64_t rows =
        clamp64(static_cast<int64_t>(tile / (1.0 + f.row_length_mean)), 1, 1 << 16);
    out.push_back(make_config(info(), {},
                              {{"block", block},
                               {"items", items},
                               {"slots", clamp64(pow2_at_least(tiles), 1024, 1 << 22)},
                               {"rows_per_block", rows}}));
  }
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), items = c.param("items");
  require_block(c, block);
  require(items >= 1 && block * items <= 4096, c, "items must be >= 1 with block * items <= 4096");
  require(c.param("slots") >= 1 && c.param("slots") <= (1 << 22), c, "slots must be 1..2^22");
  require(c.param("rows_per_block") >= 1, c, "rows_per_block must be >= 1");
  return emit_rows_kernel(c, format_kind::csr, source, c.param("rows_per_block"),
                          {{"MERGE_SEARCH", merge_search_source}});
}

}  // namespace

family csr_merge_tiles_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
