#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <vector>

#include "sparse/features.h"
#include "sparse/formats.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

csr_matrix from_cells(int32_t rows, int32_t cols,
                      const std::vector<std::pair<int32_t, int32_t>>& cells) {
  std::vector<triplet> entries;
  for (auto [r, c] : cells) entries.push_back({r, c, 1.0f});
  return csr_from_triplets(rows, cols, entries);
}

// 4 x 4:  [x x . .]
//         [. x . .]
//         [. . . .]
//         [x . . x]
TEST(Features, CountedByHandOnSmallSquare) {
  const matrix_features f =
      compute_features(from_cells(4, 4, {{0, 0}, {0, 1}, {1, 1}, {3, 0}, {3, 3}}));
  EXPECT_EQ(f.rows, 4);
  EXPECT_EQ(f.cols, 4);
  EXPECT_EQ(f.nnz, 5);
  EXPECT_DOUBLE_EQ(f.density, 5.0 / 16);
  // Row lengths 2, 1, 0, 2.
  EXPECT_DOUBLE_EQ(f.row_length_mean, 1.25);
  EXPECT_NEAR(f.row_length_std, std::sqrt(9.0 / 4 - 1.25 * 1.25), 1e-12);
  EXPECT_EQ(f.row_length_min, 0);
  EXPECT_EQ(f.row_length_max, 2);
  EXPECT_EQ(f.empty_rows, 1);
  // Sum over ordered pairs |x_i - x_j| = 2 * (1 + 2 + 2 + 1 + 1 + 0) = 14; / (2 n^2 mean) = 14
  // / 40.
  EXPECT_NEAR(f.row_length_gini, 14.0 / 40, 1e-12);
  // Offsets col - row: 0, 1, 0, -3, 0 -> three diagonals of 4 + 3 + 1 cells.
  EXPECT_EQ(f.bandwidth, 3);
  EXPECT_EQ(f.diagonal_count, 3);
  EXPECT_DOUBLE_EQ(f.diagonal_fill, 5.0 / 8);
  // 2x2 blocks holding a nonzero: (0,0), (1,0), (1,1) -> 3; one 4x4 and one 8x8 block.
  EXPECT_DOUBLE_EQ(f.block_fill_2, 5.0 / 12);
  EXPECT_DOUBLE_EQ(f.block_fill_4, 5.0 / 16);
  EXPECT_DOUBLE_EQ(f.block_fill_8, 5.0 / 64);
  EXPECT_DOUBLE_EQ(f.ell_padding_ratio, 4.0 * 2 / 5);
}

// 3 x 5 with offsets 4, 0, -2: diagonals of 1, 3 and 1 cells inside the rectangle.
TEST(Features, RectangularDiagonalsCountOnlyCellsInside) {
  const matrix_features f = compute_features(from_cells(3, 5, {{0, 4}, {1, 1}, {2, 0}}));
  EXPECT_EQ(f.bandwidth, 4);
  EXPECT_EQ(f.diagonal_count, 3);
  EXPECT_DOUBLE_EQ(f.diagonal_fill, 3.0 / 5);
  EXPECT_DOUBLE_EQ(f.density, 3.0 / 15);
  EXPECT_DOUBLE_EQ(f.row_length_gini, 0.0);
  EXPECT_DOUBLE_EQ(f.ell_padding_ratio, 1.0);
}

TEST(Features, DenseMatrixHasNoPaddingAnywhere) {
  std::vector<std::pair<int32_t, int32_t>> cells;
  for (int32_t r = 0; r < 8; ++r)
    for (int32_t c = 0; c < 8; ++c) cells.emplace_back(r, c);
  const matrix_features f = compute_features(from_cells(8, 8, cells));
  EXPECT_DOUBLE_EQ(f.density, 1.0);
  EXPECT_EQ(f.diagonal_count, 15);
  EXPECT_DOUBLE_EQ(f.diagonal_fill, 1.0);
  EXPECT_DOUBLE_EQ(f.block_fill_2, 1.0);
  EXPECT_DOUBLE_EQ(f.block_fill_4, 1.0);
  EXPECT_DOUBLE_EQ(f.block_fill_8, 1.0);
  EXPECT_DOUBLE_EQ(f.row_length_std, 0.0);
  EXPECT_DOUBLE_EQ(f.row_length_gini, 0.0);
  EXPECT_EQ(f.bandwidth, 7);
}

TEST(Features, EmptyMatricesAreWellDefined) {
  const matrix_features none = compute_features(from_cells(3, 7, {}));
  EXPECT_EQ(none.nnz, 0);
  EXPECT_EQ(none.empty_rows, 3);
  EXPECT_EQ(none.diagonal_count, 0);
  EXPECT_DOUBLE_EQ(none.ell_padding_ratio, 1.0);
  EXPECT_DOUBLE_EQ(none.row_length_gini, 0.0);
  EXPECT_DOUBLE_EQ(none.block_fill_2, 0.0);
  const matrix_features zero = compute_features(csr_matrix{});
  EXPECT_EQ(zero.rows, 0);
  EXPECT_DOUBLE_EQ(zero.density, 0.0);
  EXPECT_DOUBLE_EQ(zero.row_length_mean, 0.0);
}

TEST(Features, OneFullRowHasTheLargestGini) {
  // n rows, one holding everything: G = (n - 1) / n.
  std::vector<std::pair<int32_t, int32_t>> cells;
  for (int32_t c = 0; c < 10; ++c) cells.emplace_back(2, c);
  const matrix_features f = compute_features(from_cells(5, 10, cells));
  EXPECT_NEAR(f.row_length_gini, 4.0 / 5, 1e-12);
  EXPECT_EQ(f.empty_rows, 4);
  EXPECT_DOUBLE_EQ(f.ell_padding_ratio, 5.0);
}

// Every feature again, by brute force over the dense pattern.
matrix_features brute_force(const csr_matrix& a) {
  std::vector<std::vector<bool>> dense(a.rows, std::vector<bool>(a.cols, false));
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) dense[r][a.col_idx[i]] = true;
  matrix_features f;
  f.rows = a.rows;
  f.cols = a.cols;
  std::vector<int32_t> lengths(a.rows, 0);
  std::set<int64_t> diagonals;
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t c = 0; c < a.cols; ++c)
      if (dense[r][c]) {
        ++f.nnz;
        ++lengths[r];
        f.bandwidth = std::max<int64_t>(f.bandwidth, std::abs(c - r));
        diagonals.insert(c - r);
      }
  f.density = static_cast<double>(f.nnz) / (double(a.rows) * a.cols);
  f.row_length_min = *std::min_element(lengths.begin(), lengths.end());
  f.row_length_max = *std::max_element(lengths.begin(), lengths.end());
  f.empty_rows = static_cast<int32_t>(std::count(lengths.begin(), lengths.end(), 0));
  f.row_length_mean = static_cast<double>(f.nnz) / a.rows;
  double squares = 0, pair_differences = 0;
  for (int32_t x : lengths) {
    squares += (x - f.row_length_mean) * (x - f.row_length_mean);
    for (int32_t y : lengths) pair_differences += std::abs(x - y);
  }
  f.row_length_std = std::sqrt(squares / a.rows);
  f.row_length_gini = f.nnz ? pair_differences / (2.0 * a.rows * a.rows * f.row_length_mean) : 0;
  f.diagonal_count = static_cast<int64_t>(diagonals.size());
  int64_t diagonal_cells = 0;
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t c = 0; c < a.cols; ++c) diagonal_cells += diagonals.count(c - r);
  f.diagonal_fill = f.nnz ? static_cast<double>(f.nnz) / diagonal_cells : 0;
  double* fills[] = {&f.block_fill_2, &f.block_fill_4, &f.block_fill_8};
  for (int k = 0; k < 3; ++k) {
    const int32_t b = 2 << k;
    int64_t blocks = 0;
    for (int32_t br = 0; br * b < a.rows; ++br)
      for (int32_t bc = 0; bc * b < a.cols; ++bc) {
        bool any = false;
        for (int32_t r = br * b; r < std::min(a.rows, br * b + b); ++r)
          for (int32_t c = bc * b; c < std::min(a.cols, bc * b + b); ++c) any = any || dense[r][c];
        blocks += any;
      }
    *fills[k] = f.nnz ? static_cast<double>(f.nnz) / (double(blocks) * b * b) : 0;
  }
  f.ell_padding_ratio = f.nnz ? double(a.rows) * f.row_length_max / f.nnz : 1.0;
  return f;
}

csr_matrix random_matrix(std::mt19937_64& g) {
  std::uniform_int_distribution<int32_t> size(1, 70);
  const int32_t rows = size(g), cols = size(g);
  std::uniform_real_distribution<double> unit(0, 1);
  const double base = unit(g) * 0.3;
  std::vector<triplet> entries;
  for (int32_t r = 0; r < rows; ++r) {
    const double p = unit(g) < 0.1 ? 0.9 : base * unit(g);  // a few long rows, some empty ones
    for (int32_t c = 0; c < cols; ++c)
      if (unit(g) < p) entries.push_back({r, c, 1.0f});
  }
  return csr_from_triplets(rows, cols, entries);
}

TEST(Features, AgreeWithBruteForceOnRandomMatrices) {
  std::mt19937_64 g(42);
  for (int trial = 0; trial < 200; ++trial) {
    const csr_matrix a = random_matrix(g);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(a.rows) + " x " +
                 std::to_string(a.cols) + ", nnz " + std::to_string(a.nnz()));
    const matrix_features got = compute_features(a), want = brute_force(a);
    EXPECT_EQ(got.rows, want.rows);
    EXPECT_EQ(got.cols, want.cols);
    EXPECT_EQ(got.nnz, want.nnz);
    EXPECT_DOUBLE_EQ(got.density, want.density);
    EXPECT_NEAR(got.row_length_mean, want.row_length_mean, 1e-12);
    EXPECT_NEAR(got.row_length_std, want.row_length_std, 1e-9);
    EXPECT_NEAR(got.row_length_gini, want.row_length_gini, 1e-12);
    EXPECT_EQ(got.row_length_min, want.row_length_min);
    EXPECT_EQ(got.row_length_max, want.row_length_max);
    EXPECT_EQ(got.empty_rows, want.empty_rows);
    EXPECT_EQ(got.bandwidth, want.bandwidth);
    EXPECT_EQ(got.diagonal_count, want.diagonal_count);
    EXPECT_NEAR(got.diagonal_fill, want.diagonal_fill, 1e-12);
    EXPECT_NEAR(got.block_fill_2, want.block_fill_2, 1e-12);
    EXPECT_NEAR(got.block_fill_4, want.block_fill_4, 1e-12);
    EXPECT_NEAR(got.block_fill_8, want.block_fill_8, 1e-12);
    EXPECT_NEAR(got.ell_padding_ratio, want.ell_padding_ratio, 1e-12);
  }
}

TEST(Features, JsonHoldsEveryField) {
  std::mt19937_64 g(7);
  const matrix_features f = compute_features(random_matrix(g));
  const nlohmann::json j = features_to_json(f);
  EXPECT_EQ(j.size(), 23u);
  EXPECT_EQ(j.at("hub_share").get<double>(), f.hub_share);
  EXPECT_EQ(j.at("rows").get<int32_t>(), f.rows);
  EXPECT_EQ(j.at("cols").get<int32_t>(), f.cols);
  EXPECT_EQ(j.at("nnz").get<int64_t>(), f.nnz);
  EXPECT_EQ(j.at("density").get<double>(), f.density);
  EXPECT_EQ(j.at("row_length_mean").get<double>(), f.row_length_mean);
  EXPECT_EQ(j.at("row_length_std").get<double>(), f.row_length_std);
  EXPECT_EQ(j.at("row_length_gini").get<double>(), f.row_length_gini);
  EXPECT_EQ(j.at("row_length_min").get<int32_t>(), f.row_length_min);
  EXPECT_EQ(j.at("row_length_max").get<int32_t>(), f.row_length_max);
  EXPECT_EQ(j.at("empty_rows").get<int32_t>(), f.empty_rows);
  EXPECT_EQ(j.at("bandwidth").get<int64_t>(), f.bandwidth);
  EXPECT_EQ(j.at("diagonal_count").get<int64_t>(), f.diagonal_count);
  EXPECT_EQ(j.at("diagonal_fill").get<double>(), f.diagonal_fill);
  EXPECT_EQ(j.at("block_fill_2").get<double>(), f.block_fill_2);
  EXPECT_EQ(j.at("block_fill_4").get<double>(), f.block_fill_4);
  EXPECT_EQ(j.at("block_fill_8").get<double>(), f.block_fill_8);
  EXPECT_EQ(j.at("ell_padding_ratio").get<double>(), f.ell_padding_ratio);
  EXPECT_EQ(j.at("block_size").get<int32_t>(), f.block_size);
  EXPECT_EQ(j.at("block_size_fill").get<double>(), f.block_size_fill);
  EXPECT_EQ(j.at("row_span_max").get<int64_t>(), f.row_span_max);
  EXPECT_EQ(j.at("column_distance_mean").get<double>(), f.column_distance_mean);
  EXPECT_EQ(j.at("renumbered_distance_mean").get<double>(), f.renumbered_distance_mean);
}

// The widest row span (what CSR16 needs to fit in 16 bits): last minus first column of a row.
TEST(Features, RowSpanIsTheWidestRow) {
  const csr_matrix a = csr_from_triplets(
      4, 100, {{0, 3, 1.0f}, {0, 40, 1.0f}, {1, 99, 1.0f}, {3, 10, 1.0f}, {3, 12, 1.0f}});
  EXPECT_EQ(compute_features(a).row_span_max, 37);
  EXPECT_EQ(compute_features(csr_from_triplets(3, 3, {})).row_span_max, 0);
}

// hub_share: the share of the nonzeros in the most referenced columns, hub_columns of them at
// most and one in hub_column_fraction.
TEST(Features, HubShareCountsTheMostReferencedColumns) {
  // 2,000,000 columns (the hub table's 12288 count): column 0 in every one of 100 rows, then 200
  // columns of their own a row, 20000 singletons.
  std::vector<std::pair<int32_t, int32_t>> cells;
  for (int32_t r = 0; r < 100; ++r) {
    cells.push_back({r, 0});
    for (int32_t j = 0; j < 200; ++j) cells.push_back({r, 1 + r * 200 + j});
  }
  EXPECT_DOUBLE_EQ(compute_features(from_cells(100, 2000000, cells)).hub_share,
                   (100.0 + (hub_columns - 1)) / 20100.0);
  // 30000 columns: the top 375 (one in 80).
  EXPECT_DOUBLE_EQ(compute_features(from_cells(100, 30000, cells)).hub_share,
                   (100.0 + 374) / 20100.0);
  // 4 columns: the top one; no nonzeros: 0.
  EXPECT_DOUBLE_EQ(compute_features(from_cells(4, 4, {{0, 0}, {3, 0}, {3, 1}})).hub_share,
                   2.0 / 3.0);
  EXPECT_EQ(compute_features(csr_from_triplets(3, 3, {})).hub_share, 0.0);
}

// How far the nonzeros lie from the diagonal, relative to the matrix: near 0 for a band, about
// 1/3 when the same matrix is numbered at random (what RCSR's renumbering undoes).
TEST(Features, ColumnDistanceIsSmallForABandAndLargeForARandomOrder) {
  // (|3 - 0| + |1 - 1|) / 2 entries / max(4, 4)
  EXPECT_DOUBLE_EQ(
      compute_features(csr_from_triplets(4, 4, {{0, 3, 1.0f}, {1, 1, 1.0f}})).column_distance_mean,
      0.375);
  EXPECT_DOUBLE_EQ(compute_features(csr_from_triplets(3, 5, {{2, 0, 1.0f}})).column_distance_mean,
                   0.4);
  EXPECT_EQ(compute_features(csr_from_triplets(0, 0, {})).column_distance_mean, 0);
  EXPECT_EQ(compute_features(csr_from_triplets(5, 5, {})).column_distance_mean, 0);
  const int32_t n = 2000;
  std::vector<int32_t> label(n);
  for (int32_t i = 0; i < n; ++i) label[i] = i;
  std::mt19937_64 g(3);
  std::shuffle(label.begin(), label.end(), g);
  std::vector<triplet> band, shuffled;
  for (int32_t i = 0; i < n; ++i)
    for (int32_t d = -2; d <= 2; ++d)
      if (i + d >= 0 && i + d < n) {
        band.push_back({i, i + d, 1.0f});
        shuffled.push_back({label[i], label[i + d], 1.0f});
      }
  const double banded = compute_features(csr_from_triplets(n, n, band)).column_distance_mean;
  const double random = compute_features(csr_from_triplets(n, n, shuffled)).column_distance_mean;
  EXPECT_LT(banded, 0.001);
  EXPECT_GT(random, 0.25);
  EXPECT_LT(random, 0.4);
}

TEST(Features, RenumberedDistanceFindsALocalOrderWhereOneExists) {
  // A 2D mesh numbered at random: RCM brings it back near the diagonal. The natural order is
  // not renumbered (its own distance stands in); a wide matrix never is.
  generator_spec mesh = default_spec("mesh2d");
  mesh.rows = 4000;
  mesh.order = "random";
  const matrix_features shuffled = compute_features(generate_matrix(mesh));
  EXPECT_GT(shuffled.column_distance_mean, random_order_distance);
  EXPECT_LT(shuffled.renumbered_distance_mean * 8, shuffled.column_distance_mean);
  mesh.order = "natural";
  const matrix_features natural = compute_features(generate_matrix(mesh));
  EXPECT_EQ(natural.renumbered_distance_mean, natural.column_distance_mean);
  const matrix_features wide =
      compute_features(csr_from_triplets(2, 10, {{0, 9, 1.f}, {1, 0, 1.f}}));
  EXPECT_EQ(wide.renumbered_distance_mean, wide.column_distance_mean);
  // Computed from the RCM positions: exactly the distance of the RCSR matrix itself (the value the
  // features held when they built that matrix).
  mesh.order = "random";
  const rcsr_matrix renumbered = to_rcsr(generate_matrix(mesh));
  csr_matrix b;
  b.rows = b.cols = renumbered.rows;
  b.row_ptr = renumbered.row_ptr;
  b.col_idx = renumbered.col_idx;
  EXPECT_EQ(shuffled.renumbered_distance_mean, distance_from_diagonal(b).mean / b.rows);
  // Uniformly random columns have no local order: RCM leaves them far.
  generator_spec random = default_spec("random");
  random.rows = 4000;
  const matrix_features er = compute_features(generate_matrix(random));
  ASSERT_GT(er.column_distance_mean, random_order_distance);
  EXPECT_GT(er.renumbered_distance_mean * 8, er.column_distance_mean);
}

}  // namespace
}  // namespace sparserl
