#include "kernel/heuristic.h"

#include <algorithm>
#include <cmath>

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
  return b == 2 ? f.block_fill_2 : b == 4 ? f.block_fill_4 : f.block_fill_8;
}

// The largest square block size whose blocks are at least `min_fill` full, or 0.
int64_t dense_block(const matrix_features& f, double min_fill) {
  if (f.block_fill_8 >= min_fill) return 8;
  if (f.block_fill_4 >= min_fill) return 4;
  if (f.block_fill_2 >= min_fill) return 2;
  return 0;
}

// Power-law rows: a few rows hold a large share of the nonzeros, so any row-to-thread mapping
// is imbalanced; only the merge path splits them evenly.
bool skewed(const matrix_features& f) {
  return f.row_length_max > 32 * std::max(1.0, f.row_length_mean) || f.row_length_gini > 0.6;
}

// DIA reads 4 bytes per stored cell (diagonals x rows), CSR 8 per nonzero plus 4 per row: DIA wins
// when it streams no more bytes (stencils, and banded matrices up to about half-full bands).
bool dia_moves_fewer_bytes(const matrix_features& f) {
  return static_cast<double>(f.diagonal_count) * f.rows <= 2.0 * f.nnz + f.rows;
}

int64_t merge_rows_per_block(const matrix_features& f, int64_t items_per_block) {
  return expert_detail::clamp64(static_cast<int64_t>(items_per_block / (1.0 + f.row_length_mean)),
                                1, 1 << 16);
}

// SpMV rules, first match wins (revised from the H200 suite of docs/benchmarks.md, 2026-12-02):
//  1. no nonzeros: csr_scalar (it only writes zeros);
//  2. square blocks >= 80% full (FEM, block-structured): BSR with the largest such block, a
//     thread per row when block rows hold few blocks, else a warp per block row (checked before
//     DIA: on the FEM matrix BSR 4x4 ran 1.7x faster than DIA);
//  3. DIA streams no more bytes than CSR (stencils, banded): DIA, unrolled by 4, a coalesced
//     stream with no indices (best on every stencil and the banded matrix of the suite);
//  4. power-law rows (max > 32 x mean, or Gini > 0.6): COO, whose warps split every row evenly
//     (it beat merge-path CSR 1.3-2x on the R-MAT, circuit and LP matrices);
//  5. ELL padding <= 1.2 (nearly even rows): ELL, a thread per row, coalesced;
//  6. uneven rows (std > mean): CSR-adaptive, which bins short / medium / long rows per block;
//  7. short rows (mean < 3): csr_scalar; otherwise csr_vector with about two nonzeros per lane.
expert_config pick_spmv(const matrix_features& f) {
  const sparse_op op = sparse_op::spmv;
  const double mean = f.row_length_mean;
  if (f.nnz == 0 || f.rows == 0)
    return config("csr_scalar", op, format_kind::csr, {}, {{"block", 256}, {"unroll", 1}});
  if (const int64_t b = dense_block(f, 0.8)) {
    // nnz per block row = mean * b, each block holds b * b * fill of them.
    const double blocks_per_block_row = mean / (b * block_fill(f, b));
    const int64_t group = blocks_per_block_row >= 8 ? 32 : b;
    return config("bsr", op, format_kind::bsr, {{"r", b}, {"c", b}},
                  {{"block", 256}, {"group", group}});
  }
  if (dia_moves_fewer_bytes(f))
    return config("dia", op, format_kind::dia, {}, {{"block", 256}, {"unroll", 4}});
  if (skewed(f)) return config("coo", op, format_kind::coo, {}, {{"block", 256}, {"steps", 4}});
  if (f.ell_padding_ratio <= 1.2)
    return config("ell", op, format_kind::ell, {}, {{"block", 256}, {"unroll", 1}});
  if (f.row_length_std > mean)
    return config(
        "csr_adaptive", op, format_kind::csr, {},
        {{"block", 256},
         {"rows_per_block",
          expert_detail::clamp64(static_cast<int64_t>(4096 / std::max(1.0, mean)), 8, 1024)},
         {"stream_cap", 4096},
         {"long_row", 1024}});
  if (mean < 3)
    return config("csr_scalar", op, format_kind::csr, {}, {{"block", 256}, {"unroll", 1}});
  const int64_t lanes = std::min<int64_t>(
      32, expert_detail::pow2_at_least(static_cast<int64_t>(std::ceil(mean / 2))));
  return config("csr_vector", op, format_kind::csr, {}, {{"block", 256}, {"lanes", lanes}});
}

// SpMM rules, first match wins:
//  1. square blocks >= 80% full: BSR, a warp per block row (each B row piece feeds r rows);
//  2. power-law rows (as SpMV rule 4): merge-path CSR with a warp per share, tile of 32..128;
//  3. otherwise csr_rowgroup: the widest tile up to 128 columns, four columns per lane (float4
//     when k % 4 == 0) so a group is tile / 4 lanes, nonzeros cached by shuffles when rows are
//     long enough to fill a warp.
expert_config pick_spmm(const matrix_features& f, int k) {
  const sparse_op op = sparse_op::spmm;
  const int64_t widest = expert_detail::spmm_tiles(k).front();
  if (f.nnz > 0) {
    if (const int64_t b = dense_block(f, 0.8)) {
      const int64_t tile = std::min<int64_t>(std::max<int64_t>(widest, 32), 128);
      const int64_t per_lane = std::max<int64_t>(1, std::min<int64_t>(tile / 32, 32 / b));
      const int64_t t = 32 * per_lane;  // keeps r * tile / 32 accumulators <= 32
      return config(
          "bsr_rowgroup", op, format_kind::bsr, {{"r", b}, {"c", b}},
          {{"block", 256}, {"group", 32}, {"tile", t}, {"vec", expert_detail::tile_vec(32, t, k)}});
    }
    if (skewed(f)) {
      const int64_t tile = std::min<int64_t>(std::max<int64_t>(widest, 32), 128);
      return config("csr_merge", op, format_kind::csr, {},
                    {{"block", 256},
                     {"tile", tile},
                     {"vec", expert_detail::tile_vec(32, tile, k)},
                     {"rows_per_block", merge_rows_per_block(f, 8 * 64)}});
    }
  }
  const int64_t tile = std::min<int64_t>(widest, 128);
  const int64_t group = expert_detail::clamp64(tile / 4, 1, 32);
  const int64_t cache = group == 32 && f.row_length_mean >= 16 ? 1 : 0;
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

}  // namespace sparserl
