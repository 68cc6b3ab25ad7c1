#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/generators.h"
#include "structure_checks.h"

namespace sparserl {
namespace {

using ::testing::HasSubstr;
using testing_support::same;
using testing_support::structurally_symmetric;
using testing_support::transpose;

generator_spec spec_for(const std::string& family) {
  generator_spec s;
  s.family = family;
  s.rows = 3000;
  if (family == "stencil3d") s.points = 7;
  if (family == "random") s.density = 0.004;
  if (family == "block_diagonal" || family == "fem") s.block = 4;
  return s;
}

std::vector<int32_t> sorted_row_lengths(const csr_matrix& a) {
  std::vector<int32_t> lengths;
  for (int32_t r = 0; r < a.rows; ++r) lengths.push_back(a.row_length(r));
  std::sort(lengths.begin(), lengths.end());
  return lengths;
}

int32_t median_row_length(const csr_matrix& a) { return sorted_row_lengths(a)[a.rows / 2]; }

int64_t rows_of_length(const csr_matrix& a, int32_t length) {
  const auto lengths = sorted_row_lengths(a);
  return std::count(lengths.begin(), lengths.end(), length);
}

TEST(Generators, EveryFamilyGivesValidDeterministicCsr) {
  for (const std::string& family : generator_families()) {
    SCOPED_TRACE(family);
    generator_spec s = spec_for(family);
    const csr_matrix a = generate_matrix(s);
    EXPECT_NO_THROW(validate_csr(a));
    EXPECT_GT(a.nnz(), 0);
    for (float v : a.values) ASSERT_TRUE(std::isfinite(v) && v != 0.0f);
    EXPECT_TRUE(same(a, generate_matrix(s)));
    s.seed = 2;
    const csr_matrix b = generate_matrix(s);
    EXPECT_NO_THROW(validate_csr(b));
    // Stencils are fixed operators with classic weights: the seed has nothing to change.
    const bool seeded = family != "stencil2d" && family != "stencil3d";
    EXPECT_EQ(same(a, b), !seeded);
  }
}

TEST(Generators, TinyMatricesAreValid) {
  // The realistic families have their own minimum sizes (test_realistic_generators.cpp).
  for (const std::string& family : classic_families()) {
    for (int32_t rows : {1, 2, 7, 100}) {
      SCOPED_TRACE(family + " rows " + std::to_string(rows));
      generator_spec s = spec_for(family);
      s.rows = rows;
      s.block = std::min(s.block, rows);
      s.dense_rows = std::min(s.dense_rows, rows);
      const csr_matrix a = generate_matrix(s);
      EXPECT_NO_THROW(validate_csr(a));
      EXPECT_GT(a.rows, 0);
    }
  }
}

TEST(Generators, OutputDoesNotDependOnThreadCount) {
  const int threads = omp_get_max_threads();
  for (const std::string& family : generator_families()) {
    SCOPED_TRACE(family);
    generator_spec s = spec_for(family);
    s.rows = 20000;  // several row chunks and edge chunks
    omp_set_num_threads(1);
    const csr_matrix one = generate_matrix(s);
    omp_set_num_threads(std::max(2, threads));
    EXPECT_TRUE(same(one, generate_matrix(s)));
  }
  omp_set_num_threads(threads);
}

TEST(Generators, Stencil2dHasGridRowLengthsAndSymmetricWeights) {
  for (int32_t points : {5, 9}) {
    generator_spec s = spec_for("stencil2d");
    s.rows = 1000;  // side = round(sqrt(1000)) = 32
    s.points = points;
    const csr_matrix a = generate_matrix(s);
    const int64_t side = 32;
    ASSERT_EQ(a.rows, side * side);
    EXPECT_EQ(rows_of_length(a, points), (side - 2) * (side - 2));  // interior points
    EXPECT_EQ(sorted_row_lengths(a).front(), points == 5 ? 3 : 4);  // corners
    const csr_matrix t = transpose(a);
    EXPECT_TRUE(a.row_ptr == t.row_ptr && a.col_idx == t.col_idx && a.values == t.values);
    for (int32_t r = 0; r < a.rows; ++r) {
      double sum = 0;  // a Laplacian annihilates constants away from the boundary
      for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) sum += a.values[i];
      if (a.row_length(r) == points) {
        EXPECT_EQ(sum, 0.0);
      }
    }
    EXPECT_EQ(compute_features(a).bandwidth, side + (points == 9));
  }
}

TEST(Generators, Stencil3dHasGridRowLengthsAndSymmetry) {
  for (int32_t points : {7, 27}) {
    generator_spec s = spec_for("stencil3d");
    s.rows = 3000;  // side = round(cbrt(3000)) = 14
    s.points = points;
    const csr_matrix a = generate_matrix(s);
    const int64_t side = 14;
    ASSERT_EQ(a.rows, side * side * side);
    EXPECT_EQ(rows_of_length(a, points), (side - 2) * (side - 2) * (side - 2));
    EXPECT_EQ(sorted_row_lengths(a).front(), points == 7 ? 4 : 8);
    EXPECT_EQ(sorted_row_lengths(a).back(), points);
    EXPECT_TRUE(structurally_symmetric(a));
  }
}

TEST(Generators, BandedStaysInsideTheBand) {
  generator_spec s = spec_for("banded");
  s.bandwidth = 10;
  const csr_matrix a = generate_matrix(s);
  const matrix_features f = compute_features(a);
  EXPECT_LE(f.bandwidth, 10);
  EXPECT_GE(f.bandwidth, 9);
  EXPECT_EQ(f.empty_rows, 0);
  // Row length uniform in [1, 21] inside the band: mean 11 (a little less at the ends).
  EXPECT_NEAR(static_cast<double>(a.nnz()) / a.rows, 11.0, 0.5);
  s.cols = 500;  // rectangular: rows past cols + bandwidth are empty
  const csr_matrix wide = generate_matrix(s);
  EXPECT_EQ(wide.cols, 500);
  EXPECT_NO_THROW(validate_csr(wide));
  EXPECT_LE(compute_features(wide).bandwidth, 10);
}

TEST(Generators, BlockDiagonalBlocksAreFull) {
  generator_spec s = spec_for("block_diagonal");
  s.block = 8;
  s.rows = 1000;
  const matrix_features f = compute_features(generate_matrix(s));
  EXPECT_EQ(f.nnz, 1000 * 8);
  EXPECT_DOUBLE_EQ(f.block_fill_8, 1.0);
  EXPECT_EQ(f.bandwidth, 7);
  s.block = 5;
  s.rows = 1002;  // 200 full blocks and one 2 x 2 tail
  const csr_matrix a = generate_matrix(s);
  EXPECT_EQ(a.nnz(), 200 * 25 + 4);
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) EXPECT_EQ(a.col_idx[i] / 5, r / 5);
}

TEST(Generators, FemCouplesNeighbouringNodesWithDenseBlocks) {
  generator_spec s = spec_for("fem");
  s.block = 4;
  s.rows = 4 * 900;  // 900 nodes on a 30 x 30 grid
  const csr_matrix a = generate_matrix(s);
  const matrix_features f = compute_features(a);
  EXPECT_DOUBLE_EQ(f.block_fill_4, 1.0);
  EXPECT_TRUE(structurally_symmetric(a));
  EXPECT_EQ(f.row_length_max, 7 * 4);
  EXPECT_EQ(rows_of_length(a, 7 * 4), 4 * 28 * 28);  // interior nodes
  EXPECT_EQ(f.bandwidth, 4 * 31 + 3);                // node (i+1, j+1), last unknown
}

// Random and RCM order renumber whole nodes: the same couplings as natural order, every block
// still dense and aligned (so BSR of the block applies), but the blocks scattered or banded.
TEST(Generators, FemNodeOrdersKeepDenseAlignedBlocks) {
  generator_spec s = spec_for("fem");
  s.block = 3;
  s.rows = 3 * 900;
  const csr_matrix natural = generate_matrix(s);
  for (const char* order : {"random", "rcm"}) {
    SCOPED_TRACE(order);
    s.order = order;
    const csr_matrix a = generate_matrix(s);
    ASSERT_EQ(a.rows, natural.rows);
    EXPECT_EQ(a.nnz(), natural.nnz());
    EXPECT_TRUE(structurally_symmetric(a));
    EXPECT_FALSE(testing_support::same(a, natural));
    EXPECT_EQ(sorted_row_lengths(a), sorted_row_lengths(natural));
    const matrix_features f = compute_features(a);
    EXPECT_EQ(f.block_size, 3);
    EXPECT_DOUBLE_EQ(f.block_size_fill, 1.0);
    if (std::string(order) == "random") {
      EXPECT_GT(f.bandwidth, a.rows / 2);  // a block somewhere far off the diagonal
    } else {
      EXPECT_LT(f.bandwidth, 3 * 64);  // RCM on a 30 x 30 node grid: about two grid rows
    }
  }
  s.rows = 3 * 900 + 2;  // whole nodes only: the partial node is dropped
  EXPECT_EQ(generate_matrix(s).rows, 3 * 900);
}

TEST(Generators, RandomHitsItsDensity) {
  generator_spec s = spec_for("random");
  s.rows = 2000;
  s.cols = 5000;
  s.density = 0.002;
  const csr_matrix a = generate_matrix(s);
  EXPECT_EQ(a.cols, 5000);
  const double expected = 2000.0 * 5000 * 0.002;
  EXPECT_NEAR(static_cast<double>(a.nnz()), expected, 5 * std::sqrt(expected));
  EXPECT_LT(compute_features(a).row_length_gini, 0.25);
}

TEST(Generators, RmatRowsFollowAPowerLaw) {
  generator_spec s = spec_for("rmat");
  s.rows = 1 << 14;
  s.avg_degree = 8;
  const csr_matrix a = generate_matrix(s);
  generator_spec r = spec_for("random");
  r.rows = s.rows;
  r.density = 8.0 / s.rows;
  const double rmat_gini = compute_features(a).row_length_gini;
  const double random_gini = compute_features(generate_matrix(r)).row_length_gini;
  EXPECT_GT(rmat_gini, random_gini + 0.3);
  // Repeated edges merge, so fewer nonzeros than edges drawn, but not far fewer.
  EXPECT_LE(a.nnz(), 8 * s.rows);
  EXPECT_GE(a.nnz(), 4 * s.rows);
  s.rows = 5000;  // not a power of two: edges beyond it are redrawn
  EXPECT_NO_THROW(validate_csr(generate_matrix(s)));
}

TEST(Generators, CircuitHasAFewVeryDenseRows) {
  generator_spec s = spec_for("circuit");
  s.rows = 5000;
  s.avg_degree = 6;
  s.dense_rows = 3;
  const csr_matrix a = generate_matrix(s);
  const auto lengths = sorted_row_lengths(a);
  const int32_t median = lengths[lengths.size() / 2];
  EXPECT_GT(lengths.back(), 50 * median);
  EXPECT_GT(lengths[lengths.size() - 3], 50 * median);  // all three dense rows
  EXPECT_LT(lengths[lengths.size() - 4], 10 * median);
  EXPECT_NEAR(static_cast<double>(a.nnz()), 5000 * 6 + 2 * 3 * 0.2 * 5000, 0.15 * a.nnz());
  for (int32_t r = 0; r < a.rows; ++r)  // the diagonal is always there
    EXPECT_TRUE(std::binary_search(a.col_idx.begin() + a.row_ptr[r],
                                   a.col_idx.begin() + a.row_ptr[r + 1], r));
}

TEST(Generators, LpIsRectangularWithSomeLongRows) {
  generator_spec s = spec_for("lp");
  s.rows = 2000;
  s.avg_degree = 8;
  const csr_matrix a = generate_matrix(s);
  EXPECT_GE(a.cols, 2 * a.rows);
  EXPECT_LE(a.cols, 5 * a.rows);
  EXPECT_GE(sorted_row_lengths(a).back(), 5 * median_row_length(a));
  // round(sqrt(2000) / 4) = 11 long rows of 10 * avg_degree entries.
  EXPECT_NEAR(static_cast<double>(a.nnz()), 2000 * 8 + 11 * 80, 0.1 * a.nnz());
  s.cols = 7000;
  EXPECT_EQ(generate_matrix(s).cols, 7000);
}

void expect_error(const generator_spec& s, const std::string& part) {
  try {
    generate_matrix(s);
    ADD_FAILURE() << "no error for " << s.family << ", expected one mentioning " << part;
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr(part));
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(Generators, BadParametersAreClearErrors) {
  generator_spec s = spec_for("nope");
  expect_error(s, "unknown generator family 'nope'");
  for (const std::string& family : generator_families()) expect_error(s, family);
  auto with = [](const std::string& family, const std::function<void(generator_spec&)>& change) {
    generator_spec s = spec_for(family);
    change(s);
    return s;
  };
  expect_error(with("stencil2d", [](auto& s) { s.points = 7; }), "points must be 5 or 9");
  expect_error(with("stencil3d", [](auto& s) { s.points = 5; }), "points must be 7 or 27");
  expect_error(with("stencil2d", [](auto& s) { s.cols = 10; }), "cols must be 0");
  expect_error(with("random", [](auto& s) { s.rows = 0; }), "rows must be >= 1");
  expect_error(with("random", [](auto& s) { s.density = 0; }), "density");
  expect_error(with("random", [](auto& s) { s.density = std::nan(""); }), "density");
  expect_error(with("random", [](auto& s) { s.rows = 1 << 20, s.density = 1; }), "2^31-1");
  expect_error(with("banded", [](auto& s) { s.bandwidth = -1; }), "bandwidth");
  expect_error(with("block_diagonal", [](auto& s) { s.block = 0; }), "block must be");
  expect_error(with("fem", [](auto& s) { s.cols = 17; }), "square");
  expect_error(with("rmat", [](auto& s) { s.rmat_a = 0.9; }), "a + b + c <= 1");
  expect_error(with("rmat", [](auto& s) { s.avg_degree = -1; }), "avg_degree");
  expect_error(with("rmat", [](auto& s) { s.rows = 5000, s.rmat_a = s.rmat_b = s.rmat_c = 0; }),
               "raise rmat_a");
  expect_error(with("circuit", [](auto& s) { s.dense_rows = 1 << 20; }), "dense_rows");
  expect_error(with("lp", [](auto& s) { s.avg_degree = 0.5; }), "avg_degree");
}

}  // namespace
}  // namespace sparserl
