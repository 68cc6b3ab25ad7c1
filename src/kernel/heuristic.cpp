#include "kernel/heuristic.h"

#include <algorithm>
#include <cmath>

#include "sparse/formats.h"

namespace sparserl {

namespace {

expert_config config(const char* name, sparse_op op, format_kind format,
                     std::map<std::string, int64_t> format_params,
                     std::map<std::string, int64_t> params) {
  expert_config c;
  c.name = name;
  c.op = op;
  c.format = format;
  c.format_params = std::move(format_params);
  c.params = std::move(params);
  return c;
}

double block_fill(const matrix_features& f, int64_t b) {
  return expert_detail::block_fill_of(f, b);
}

// The largest square block size (2, 4 or 8) whose blocks are at least `min_fill` full, or 0. The
// detected block size (sparse/block_shape.h, e.g. 3x3 for 3-dof FEM) is picked by SpMV rule 2
// since the H200 timed it (realistic suite, 2026-12-04); CSR16 is in the tuner's space, not
// picked here.
int64_t dense_block(const matrix_features& f, double min_fill) {
  if (f.block_fill_8 >= min_fill) return 8;
  if (f.block_fill_4 >= min_fill) return 4;
  if (f.block_fill_2 >= min_fill) return 2;
  return 0;
}

// DIA reads 4 bytes per stored cell (diagonals x rows), CSR 8 per nonzero plus 4 per row: DIA wins
// when it streams no more bytes (stencils, and banded matrices up to about half-full bands).
bool dia_moves_fewer_bytes(const matrix_features& f) {
  return static_cast<double>(f.diagonal_count) * f.rows <= 2.0 * f.nnz + f.rows;
}

// SpMV rules, first match wins (revised from the H200 suite of docs/benchmarks.md, 2026-12-02, and
// from the 211 timed labels of data/labels/, 2026-12-04: `sparserl dataset score-heuristic`):
//  1. no nonzeros: csr_scalar (it only writes zeros);
//  2. square blocks >= 80% full (FEM, block-structured): BSR with the detected block shape when it
//     is not a power of two (3x3, 6x6: below), else with the largest such block, a
//     thread per row when block rows hold few blocks, else a warp per block row (checked before
//     DIA: on the FEM matrix BSR 4x4 ran 1.7x faster than DIA);
//  3. DIA streams no more bytes than CSR (stencils, banded): DIA, a coalesced stream with no
//     indices (best on every stencil and the banded matrix of the suite), unrolled by 8 with 2
//     rows per thread from 270,336 rows (the H200's resident threads), unrolled by 4 below;
//  4. power-law rows (max > 32 x mean, or Gini > 0.6): when a fifth or more of the nonzeros lie
//     in the 12288 most referenced columns (hub_share) of 500k columns or more, HCOO with a
//     49152-column hub table in shared memory (realistic suite, H100 2026-12-07: both power-law
//     graphs 1.30-1.31x of cuSPARSE, where the best before reached 0.97x and 1.10x); else COO,
//     whose warps split every row evenly (it beat merge-path CSR 1.3-2x on the R-MAT, circuit and
//     LP matrices), 1 step per warp below 1M nonzeros, 16 when some row passes long_tail_row and
//     there are 4M nonzeros to spread (R-MAT: 1.12x faster than 4 steps in one run, 5% slower in
//     another), else 4; but when the lengths are even apart from a few huge rows (Gini <= 0.6, a
//     row past long_tail_row) and there are 1M rows or more, coo4 in 2 steps: four consecutive
//     entries a lane, 16-byte streamed loads, lane runs joined by one segmented scan (the 2M-row
//     circuit: 0.84x of cuSPARSE in the SpMV probe, H100 2026-12-07, where the library's best
//     before, HYB, reached 0.71x in the suite and 16-step COO 0.75x in the probe; not yet timed by
//     the suite itself); LP (longest row 1673, Gini 0.36) was 5% faster with COO, and so were
//     circuits of 113k-388k rows;
//  5. a square matrix in a random node order (mean |col - row| above a tenth of the width) that
//     has a local order (RCM brings it 8x closer) and rows of 12 or more, or of 5 or more on
//     300k rows or more (rcsr_long_rows and rcsr_min_rows, below): RCSR, x gathered into
//     the RCM numbering, then about four nonzeros per lane (realistic suite, H200 2026-12-04:
//     mesh2d / mesh3d / kNN in random order 1.31-2.04x of cuSPARSE with RCSR against 1.03-1.11x
//     without; road in random order, 3.8 per row, 0.68x of ELL: the gather and the scattered
//     write cost a random access per row, which short rows do not pay back);
//  6. ELL padding <= 1.2 (nearly even rows), or <= 4/3 with rows shorter than 5 (road graphs),
//     and columns spread over the whole matrix: ELL, a thread per row, coalesced (when a row's
//     columns lie near it, CSR's cached x wins);
//  7. uneven rows (std > mean): CSR-adaptive, which bins short / medium / long rows per block;
//  8. short rows (mean < 3), or rows up to 12 whose columns lie near them: csr_scalar;
//     otherwise csr_vector with about two nonzeros per lane (four when the columns lie near the
//     row), blocks of 128 (5-6% faster than 256 on the banded and random matrices, H200
//     2026-12-03).
// Lanes for a lane group per row: about `per_lane` nonzeros each, a power of two up to a warp.
int64_t lanes_for(double mean, double per_lane) {
  return std::min<int64_t>(
      32, expert_detail::pow2_at_least(static_cast<int64_t>(std::ceil(mean / per_lane))));
}

// Threads the H200 holds resident at once (132 SMs x 2048).
constexpr int64_t resident_threads = 132 * 2048;

// RCSR's gather and scattered write cost a random access per row, which rows of 12 or more pay
// back at every size (kNN in random order, 14-32 per row, 100k-380k rows: RCSR the fastest on all
// 15 timed labels; held-out mesh3d, 15 per row, 83k-280k rows) and rows of 5-12 only on large
// matrices (mesh2d in random order, 7 per row: RCSR 0.84-0.97x of the fastest, csr_vector on 7,
// on the 8 timed labels of 113k-253k rows, 0.99-1.00x on the 3 of 332k-383k; 1.29-1.31x of
// cuSPARSE on the realistic suite's 1.8M rows; kNN with 9 per row at 143k rows: 0.94x).
constexpr double rcsr_long_rows = 12;
// HCOO's hub table pays where x is far larger than the table and the caches (measured on 1M
// columns; below, x's hot lines stay in L1 / L2 anyway).
constexpr int32_t hcoo_min_cols = 500000;
constexpr int64_t rcsr_min_rows = 300000;

expert_config pick_spmv(const matrix_features& f) {
  const sparse_op op = sparse_op::spmv;
  const double mean = f.row_length_mean;
  if (f.nnz == 0 || f.rows == 0)
    return config("csr_scalar", op, format_kind::csr, {}, {{"block", 256}, {"unroll", 1}});
  // The detected block shape when it is not a power of two (FEM with 3 or 6 unknowns a node) and
  // larger than the largest full power-of-two block: BSR k x k, a lane group of the next power of
  // two per block row, blocks of 128 (the tuned best on all four FEM matrices of the realistic
  // suite, H200 2026-12-04: 3x3 group 4 on three, 6x6 group 8, 1.20-1.52x of cuSPARSE; block 128
  // on three of the four; the rule below picked DIA, csr_vector or BSR 2x2 there).
  if (f.block_size > 1 && !expert_detail::is_pow2(f.block_size) && f.block_size_fill >= 0.8 &&
      f.block_size > dense_block(f, 0.8)) {
    const int64_t b = f.block_size;
    return config("bsr", op, format_kind::bsr, {{"r", b}, {"c", b}},
                  {{"block", 128}, {"group", expert_detail::pow2_at_least(b)}});
  }
  if (const int64_t b = dense_block(f, 0.8)) {
    // nnz per block row = mean * b, each block holds b * b * fill of them.
    const double blocks_per_block_row = mean / (b * block_fill(f, b));
    const int64_t group = blocks_per_block_row >= 8 ? 32 : expert_detail::pow2_at_least(b);
    return config("bsr", op, format_kind::bsr, {{"r", b}, {"c", b}},
                  {{"block", 256}, {"group", group}});
  }
  if (dia_moves_fewer_bytes(f)) {
    // Two rows per thread once one row per thread no longer fits the GPU's resident threads
    // (H200: 132 SMs x 2048 = 270,336): on 78 timed labels of five families (2026-12-04) the
    // crossover lay between 263,508 and 270,651 rows, 1.10-1.24x faster above, 2-13% slower below.
    const bool large = f.rows >= resident_threads;
    return config("dia", op, format_kind::dia, {},
                  {{"block", 256}, {"unroll", large ? 8 : 4}, {"rows_per_thread", large ? 2 : 1}});
  }
  if (expert_detail::skewed_rows(f)) {
    // A fifth or more of the nonzeros in the 12288 most referenced columns of a large x
    // (power-law graphs): HCOO with the largest hub table, one block a multiprocessor, 1 step
    // (realistic suite, H100 2026-12-07: power-law in random order 1.31x of cuSPARSE against
    // 0.98x for coo4 here and 0.97x for the best before, in natural order 1.30x against 1.10x).
    if (f.hub_share >= 0.2 && f.cols >= hcoo_min_cols)
      return config("hcoo", op, format_kind::hcoo, {{"hubs", hub_coo_matrix::max_hubs}},
                    {{"block", 512},
                     {"grid", expert_detail::hcoo_grid(hub_coo_matrix::max_hubs)},
                     {"steps", 1}});
    const bool long_tail = f.row_length_max > expert_detail::long_tail_row;
    // A regular body with a few huge rows (low Gini) on large matrices (the 2M-row circuit):
    // coo4, four entries a lane, 2 steps (SpMV probe, H100 2026-12-07: 69 us against 79 for the
    // library's best HYB and 88 for COO; cuSPARSE 57); below 1M rows COO (10 timed circuit
    // labels of 113k-388k rows: COO 4 steps within 0.995x of the fastest, HYB 0.45-0.71x).
    if (f.row_length_gini <= 0.6 && f.ell_padding_ratio > 1.5 && long_tail && f.rows >= 1000000)
      return config("coo4", op, format_kind::coo, {}, {{"block", 256}, {"steps", 2}});
    // Steps per warp by size: small matrices need every warp they can get (small R-MAT, 0.5M
    // nonzeros: 1 step 1.13x faster than 4 in 2 of 3 H200 runs), 16 only when there are still
    // many chunks to spread.
    const int64_t steps = f.nnz < (int64_t{1} << 20)                 ? 1
                          : long_tail && f.nnz >= (int64_t{1} << 22) ? 16
                                                                     : 4;
    return config("coo", op, format_kind::coo, {}, {{"block", 256}, {"steps", steps}});
  }
  if (expert_detail::rcsr_order_pays(f) && renumbering_finds_local_order(f) &&
      (mean >= rcsr_long_rows || (mean >= 5 && f.rows >= rcsr_min_rows))) {
    return config("rcsr_vector", op, format_kind::rcsr, {},
                  {{"block", 256}, {"lanes", lanes_for(mean, 4)}});
  }
  // ELL's thread per row reads x at columns scattered over the whole vector; when a row's
  // columns lie near it (natural or bandwidth-reducing order) CSR reuses x in cache instead
  // (timed labels, 2026-12-04: kNN graphs in random order ELL within 0.98x of the fastest, in
  // natural and RCM order ELL 0.56-0.87x, CSR the fastest).
  const bool local = f.bandwidth < std::max(f.rows, f.cols) / 4;
  if (f.ell_padding_ratio <= 1.2 && !local)
    return config("ell", op, format_kind::ell, {}, {{"block", 256}, {"unroll", 1}});
  // Rows of fewer than 5 at most a third padded (road graphs in random order, 3.8 a row, padding
  // 1.32): ELL in blocks of 128, the tuned best in all six realistic-suite runs (H200 2026-12-04
  // to H100 2026-12-07, 0.99-1.07x of cuSPARSE) where csr_vector, picked before, reached
  // 0.94-0.96x.
  if (mean < 5 && f.ell_padding_ratio <= 4.0 / 3.0 && !local)
    return config("ell", op, format_kind::ell, {}, {{"block", 128}, {"unroll", 1}});
  if (f.row_length_std > mean)
    return config(
        "csr_adaptive", op, format_kind::csr, {},
        {{"block", 256},
         {"rows_per_block",
          expert_detail::clamp64(static_cast<int64_t>(4096 / std::max(1.0, mean)), 8, 1024)},
         {"stream_cap", 4096},
         {"long_row", 1024}});
  // A thread per row for short rows, and for rows up to 12 whose columns lie near them, where
  // neighbouring threads read neighbouring x (timed labels: 2D meshes in RCM order, 7 per row,
  // csr_scalar the fastest on 14 of 14, csr_vector 0.87-0.95x of it).
  if (mean < 3 || (local && mean <= 12))
    return config("csr_scalar", op, format_kind::csr, {}, {{"block", 256}, {"unroll", 1}});
  // About two nonzeros per lane; four when the columns lie near the row (x comes from cache, so
  // a lane keeps up with longer runs: kNN graphs in natural / RCM order, 13-32 per row, timed
  // fastest at mean / 4 lanes or the CSR16 twin of it on 14 of 16 labels).
  return config("csr_vector", op, format_kind::csr, {},
                {{"block", 128}, {"lanes", lanes_for(mean, local ? 4 : 2)}});
}

// SpMM rules, first match wins:
//  1. square blocks >= 80% full: BSR, a group of 8 lanes per block row with the widest tile
//     that keeps r x tile / 8 accumulators <= 32 (the tuned best on both block matrices of the
//     H200 suite, 2026-12-03; a warp per block row, the previous pick, was 1.26x slower on FEM);
//  2. power-law rows (as SpMV rule 4): hyb_split, the nnz split: rows up to the harness's
//     automatic HYB width whole in the ELL part (a lane group of tile / 4 lanes per row), the
//     long rows' tails in chunks of nonzeros per lane group added by atomics: 128 when the long
//     rows are few beside an even body (Gini <= 0.6: circuit, 1.36x faster than 32), 32
//     otherwise (R-MAT). On the H200 (2026-12-03, k = 64) it was the tuned best on circuit, R-MAT
//     and small R-MAT (1.26-1.75x cuSPARSE), always with width 0 and 16 lanes; merge-path CSR, the
//     previous pick, left a whole long row to one block (0.12x on circuit);
//  3. uneven rows that are not power-law (longest row > 8 x mean: LP, 25x): merge-path CSR,
//     as its space sizes it (the tuned best on LP; csr_rowgroup was 1.83x slower);
//  4. otherwise csr_rowgroup: the widest tile up to 128 columns, eight columns (two float4) per
//     lane, so a group is tile / 8 lanes (on the H200 suite at k = 64 group 8 beat group 16 by
//     12-32% on 5 of the 7 large CSR matrices: two independent 16-byte B loads per lane and
//     nonzero, four rows per warp); nonzeros cached by shuffles (one coalesced load of `group`
//     column indices instead of one dependent load per nonzero) once the mean row fills at
//     least half a group.
expert_config pick_spmm(const matrix_features& f, int k) {
  const sparse_op op = sparse_op::spmm;
  const int64_t widest = expert_detail::spmm_tiles(k).front();
  if (f.nnz > 0) {
    if (const int64_t b = dense_block(f, 0.8)) {
      if (const int64_t tile = expert_detail::bsr_spmm_tile(b, 8, k))  // the space's group-8 entry
        return config("bsr_rowgroup", op, format_kind::bsr, {{"r", b}, {"c", b}},
                      {{"block", 256},
                       {"group", 8},
                       {"tile", tile},
                       {"vec", expert_detail::tile_vec(8, tile, k)}});
      const int64_t tile = std::min<int64_t>(std::max<int64_t>(widest, 32), 128);
      const int64_t per_lane = std::max<int64_t>(1, std::min<int64_t>(tile / 32, 32 / b));
      const int64_t t = 32 * per_lane;  // keeps r * tile / 32 accumulators <= 32
      return config(
          "bsr_rowgroup", op, format_kind::bsr, {{"r", b}, {"c", b}},
          {{"block", 256}, {"group", 32}, {"tile", t}, {"vec", expert_detail::tile_vec(32, t, k)}});
    }
    if (expert_detail::skewed_rows(f)) {
      const int64_t tile = std::min<int64_t>(widest, 128);
      const int64_t group = expert_detail::clamp64(tile / 4, 1, 32);
      return config("hyb_split", op, format_kind::hyb, {{"width", 0}},
                    {{"block", 256},
                     {"group", group},
                     {"tile", tile},
                     {"vec", expert_detail::tile_vec(group, tile, k)},
                     {"chunk", f.row_length_gini <= 0.6 ? 128 : 32}});
    }
    if (f.row_length_max > 8 * std::max(1.0, f.row_length_mean)) {
      // Uneven but not power-law (LP): merge-path, as its space derives it (64 rows +
      // nonzeros per warp, 8 warps).
      int64_t tile = 32;
      for (int64_t t : expert_detail::spmm_tiles(k))
        if (t >= 32 && t <= 128) {
          tile = t;
          break;
        }
      return config("csr_merge", op, format_kind::csr, {},
                    {{"block", 256},
                     {"tile", tile},
                     {"vec", expert_detail::tile_vec(32, tile, k)},
                     {"rows_per_block", expert_detail::merge_spmm_rows_per_block(f, 64)}});
    }
  }
  const int64_t tile = std::min<int64_t>(widest, 128);
  const int64_t group = expert_detail::clamp64(tile / 8, 1, 32);
  const int64_t cache = 2 * f.row_length_mean >= group ? 1 : 0;
  return config("csr_rowgroup", op, format_kind::csr, {},
                {{"block", 256},
                 {"group", group},
                 {"tile", tile},
                 {"vec", expert_detail::tile_vec(group, tile, k)},
                 {"cache", cache}});
}

}  // namespace

expert_config pick_heuristic(sparse_op op, const matrix_features& f, int k) {
  return op == sparse_op::spmv ? pick_spmv(f) : pick_spmm(f, std::max(k, 1));
}

std::vector<expert_config> tuning_space(sparse_op op, const matrix_features& f, int k) {
  std::vector<expert_config> space = expert_space(op, f, k);
  expert_config pick = pick_heuristic(op, f, k);
  const std::string described = pick.describe();
  if (std::none_of(space.begin(), space.end(),
                   [&](const expert_config& c) { return c.describe() == described; }))
    space.push_back(std::move(pick));
  return space;
}

std::optional<expert_config> find_in_tuning_space(sparse_op op, const matrix_features& f, int k,
                                                  const std::string& described) {
  for (expert_config& c : tuning_space(op, f, k))
    if (c.describe() == described) return std::move(c);
  return std::nullopt;
}

}  // namespace sparserl
