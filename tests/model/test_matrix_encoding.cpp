// The matrix encoding: fixed token count, determinism under construction order, the sinusoid
// formula against hand-computed values, the global token, stratified sampling, cycling of small
// matrices, the empty matrix and bad inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "model/matrix_encoding.h"
#include "sparse/error.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

using ::testing::HasSubstr;
using coord = std::pair<int64_t, int64_t>;

csr_matrix from_coords(int32_t rows, int32_t cols, const std::vector<coord>& coords) {
  std::vector<triplet> entries;
  for (const auto& [r, c] : coords)
    entries.push_back({static_cast<int32_t>(r), static_cast<int32_t>(c), 1.0f});
  return csr_from_triplets(rows, cols, std::move(entries));
}

csr_matrix generated(const std::string& family, int32_t rows, uint64_t seed = 1) {
  generator_spec spec;
  spec.family = family;
  spec.rows = rows;
  spec.seed = seed;
  return generate_matrix(spec);
}

const float* token(const matrix_encoding& e, int64_t t) {
  return e.features.data() + t * e.feature_dim;
}

bool is_nonzero(const csr_matrix& a, const coord& rc) {
  const auto begin = a.col_idx.begin() + a.row_ptr[rc.first];
  const auto end = a.col_idx.begin() + a.row_ptr[rc.first + 1];
  return std::binary_search(begin, end, static_cast<int32_t>(rc.second));
}

TEST(matrix_encoding, always_one_plus_max_nnz_tokens) {
  const csr_matrix matrices[] = {csr_from_triplets(40, 30, {}),
                                 from_coords(5, 5, {{0, 0}, {3, 1}, {4, 4}}),
                                 generated("random", 2000)};
  for (const csr_matrix& a : matrices) {
    for (const matrix_encoding_options o :
         {matrix_encoding_options{}, matrix_encoding_options{16, 10, 100.0}}) {
      const matrix_encoding e = encode_matrix(a, o);
      EXPECT_EQ(e.tokens, 1 + o.max_nnz);
      EXPECT_EQ(e.feature_dim, 3 * o.dim);
      EXPECT_EQ(e.features.size(), static_cast<size_t>(e.tokens * e.feature_dim));
      EXPECT_EQ(e.coords.size(), a.nnz() == 0 ? 0u : static_cast<size_t>(o.max_nnz));
    }
  }
}

TEST(matrix_encoding, same_structure_in_any_construction_order_gives_the_same_encoding) {
  const csr_matrix a = generated("rmat", 4096);
  std::vector<triplet> entries;
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i)
      entries.push_back({r, a.col_idx[i], -2.5f});  // other values: only the structure counts
  std::shuffle(entries.begin(), entries.end(), std::mt19937_64(7));
  const csr_matrix shuffled = csr_from_triplets(a.rows, a.cols, std::move(entries));

  const matrix_encoding first = encode_matrix(a, {});
  const matrix_encoding again = encode_matrix(a, {});
  const matrix_encoding reordered = encode_matrix(shuffled, {});
  EXPECT_EQ(first.features, again.features);
  EXPECT_EQ(first.coords, again.coords);
  EXPECT_EQ(first.features, reordered.features);
  EXPECT_EQ(first.coords, reordered.coords);
  // Precomputed features give the same result.
  EXPECT_EQ(encode_matrix(a, compute_features(a), {}).features, first.features);
}

TEST(matrix_encoding, different_matrices_differ) {
  const matrix_encoding banded = encode_matrix(generated("banded", 3000), {});
  const matrix_encoding random = encode_matrix(generated("random", 3000), {});
  const matrix_encoding random2 = encode_matrix(generated("random", 3000, 2), {});
  EXPECT_NE(banded.features, random.features);
  EXPECT_NE(random.features, random2.features);
  EXPECT_NE(random.coords, random2.coords);
  // The global tokens alone already tell the families apart.
  EXPECT_FALSE(std::equal(token(banded, 0), token(banded, 1), token(random, 0)));
}

TEST(matrix_encoding, sinusoid_matches_hand_computed_values) {
  // dim 10, base 10^5: omega_k = pi/2 * 10^k. The one nonzero (2, 4) of a 5 x 5 matrix has
  // row position 2/4 = 0.5, column position 4/4 = 1 and offset ln(1 + 2) / ln 5 = 0.6826062.
  const matrix_encoding e = encode_matrix(from_coords(5, 5, {{2, 4}}), {4, 10, 100000.0});
  const float h = std::sqrt(0.5f);
  const float row[10] = {h, h, 1, 0, 0, -1, 0, 1, 0, 1};  // pi/4, 5pi/2, 25pi, 250pi, 2500pi
  const float col[10] = {1, 0, 0, -1, 0, 1, 0, 1, 0, 1};  // pi/2, 5pi, 50pi, 500pi, 5000pi
  const float offset[10] = {0.8782715f, 0.4781622f,  -0.9629067f, -0.2698346f, 0.3980407f,
                            0.9173678f, -0.8146979f, -0.5798856f, -0.0971493f, -0.9952698f};
  for (int64_t t = 1; t < e.tokens; ++t) {  // one nonzero, repeated in every token
    for (int i = 0; i < 10; ++i) {
      EXPECT_NEAR(token(e, t)[i], row[i], 2e-6) << "token " << t << " row " << i;
      EXPECT_NEAR(token(e, t)[10 + i], col[i], 2e-6) << "token " << t << " col " << i;
      EXPECT_NEAR(token(e, t)[20 + i], offset[i], 2e-6) << "token " << t << " offset " << i;
    }
  }
}

TEST(matrix_encoding, near_diagonals_of_a_large_matrix_get_distinct_codes) {
  // Offsets 1 and 2 in a 10^6-row matrix: the log scale keeps them apart (a linear scale would
  // put them 10^-6 apart).
  const int32_t n = 1'000'000;
  const matrix_encoding one = encode_matrix(from_coords(n, n, {{0, 1}}), {});
  const matrix_encoding two = encode_matrix(from_coords(n, n, {{0, 2}}), {});
  const matrix_encoding_options o;
  float largest = 0;
  for (int i = 2 * o.dim; i < 3 * o.dim; ++i)
    largest = std::max(largest, std::abs(token(one, 1)[i] - token(two, 1)[i]));
  EXPECT_GT(largest, 0.1f);
}

TEST(matrix_encoding, global_token_holds_the_features_then_zeros) {
  // The 4 x 4 identity: every nonzero on the main diagonal, no empty rows, density 1/4.
  const matrix_encoding e = encode_matrix(from_coords(4, 4, {{0, 0}, {1, 1}, {2, 2}, {3, 3}}), {});
  const float* g = token(e, 0);
  const double log_2_31 = 31 * std::log(2.0);
  EXPECT_NEAR(g[0], std::log(5.0) / log_2_31, 1e-6);  // rows
  EXPECT_NEAR(g[2], std::log(5.0) / log_2_31, 1e-6);  // nnz
  EXPECT_NEAR(g[3], 0.25, 1e-6);                      // density
  EXPECT_NEAR(g[9], 0.0, 1e-6);                       // row-length variation
  EXPECT_NEAR(g[11], 0.0, 1e-6);                      // empty rows
  EXPECT_NEAR(g[12], 0.0, 1e-6);                      // bandwidth
  EXPECT_NEAR(g[15], 1.0, 1e-6);                      // on the main diagonal
  EXPECT_NEAR(g[16], 1.0, 1e-6);                      // near the diagonal
  EXPECT_NEAR(g[21], 4.0 / 128, 1e-6);                // distinct samples / max_nnz
  for (int64_t i = matrix_global_feature_count; i < e.feature_dim; ++i) EXPECT_EQ(g[i], 0.0f);
}

// Features 22-25: the node order and the block shape. A mesh numbered at random strays far
// (22 near 1) yet has a local order RCM finds (23 small); a power-law graph in random order has
// none (23 near 1); the same mesh in natural order is local (22 small, 23 = 1: not computed);
// 3-dof FEM has 3 x 3 blocks, full (24 = 3/8, 25 = 1).
TEST(matrix_encoding, global_token_tells_the_node_order_and_the_block_shape) {
  auto graph = [](const char* family, const char* order) {
    generator_spec s = default_spec(family);
    s.rows = 3000;
    s.order = order;
    return encode_matrix(generate_matrix(s), {});
  };
  const matrix_encoding mesh_random = graph("mesh2d", "random");
  EXPECT_GT(token(mesh_random, 0)[22], 0.8f);
  EXPECT_LT(token(mesh_random, 0)[23], 0.1f);
  const matrix_encoding power_random = graph("powerlaw", "random");
  EXPECT_GT(token(power_random, 0)[22], 0.8f);
  EXPECT_GT(token(power_random, 0)[23], 0.5f);
  const matrix_encoding mesh_natural = graph("mesh2d", "natural");
  EXPECT_LT(token(mesh_natural, 0)[22], 0.3f);
  EXPECT_FLOAT_EQ(token(mesh_natural, 0)[23], 1.0f);
  EXPECT_FLOAT_EQ(token(mesh_natural, 0)[24], 1.0f / 8);  // no blocks
  generator_spec fem = default_spec("fem_mesh");
  fem.rows = 3000;
  fem.dof = 3;
  const matrix_encoding blocks = encode_matrix(generate_matrix(fem), {});
  EXPECT_FLOAT_EQ(token(blocks, 0)[24], 3.0f / 8);
  EXPECT_FLOAT_EQ(token(blocks, 0)[25], 1.0f);
}

TEST(matrix_encoding, samples_one_long_row_and_a_rare_far_band) {
  // Tridiagonal 20000 x 20000 (~60k nonzeros) plus row 7777 with 2000 nonzeros and 200 entries
  // on the far diagonal col - row = -15000: a uniform sample of 128 would expect 4 and 0.4 of them.
  const int32_t n = 20000, long_row = 7777;
  std::vector<coord> coords;
  for (int32_t r = 0; r < n; ++r)
    for (int32_t c = std::max(0, r - 1); c <= std::min(n - 1, r + 1); ++c) coords.push_back({r, c});
  for (int32_t k = 0; k < 2000; ++k) coords.push_back({long_row, long_row + 2 * k});
  for (int32_t r = 15000; r < 15200; ++r) coords.push_back({r, r - 15000});
  const csr_matrix a = from_coords(n, n, coords);
  const matrix_encoding e = encode_matrix(a, {});

  int64_t in_long_row = 0, in_far_band = 0;
  std::set<int64_t> rows;
  for (const coord& rc : e.coords) {
    in_long_row += rc.first == long_row;
    in_far_band += rc.second - rc.first == -15000;
    rows.insert(rc.first);
  }
  EXPECT_GE(in_long_row, 4);
  EXPECT_GE(in_far_band, 2);
  EXPECT_GE(rows.size(), 60u);  // the row-block stratum spreads over the matrix
  // Distinct real nonzeros, sorted by (row, col).
  EXPECT_TRUE(std::is_sorted(e.coords.begin(), e.coords.end()));
  EXPECT_EQ(std::adjacent_find(e.coords.begin(), e.coords.end()), e.coords.end());
  for (const coord& rc : e.coords) EXPECT_TRUE(is_nonzero(a, rc)) << rc.first << ", " << rc.second;
}

TEST(matrix_encoding, few_nonzeros_repeat_cyclically) {
  const std::vector<coord> nonzeros = {{0, 3}, {1, 1}, {4, 0}};
  const matrix_encoding e = encode_matrix(from_coords(5, 5, {{4, 0}, {0, 3}, {1, 1}}), {8, 10});
  ASSERT_EQ(e.coords.size(), 8u);
  for (size_t i = 0; i < e.coords.size(); ++i) EXPECT_EQ(e.coords[i], nonzeros[i % 3]) << i;
  EXPECT_TRUE(std::equal(token(e, 1), token(e, 2), token(e, 4)));
  EXPECT_FALSE(std::equal(token(e, 1), token(e, 2), token(e, 2)));
  EXPECT_NEAR(token(e, 0)[21], 3.0 / 8, 1e-6);
}

TEST(matrix_encoding, exactly_max_nnz_plus_one_nonzeros_are_sampled_without_repeats) {
  std::vector<coord> coords;
  for (int32_t r = 0; r < 17; ++r) coords.push_back({r, (r * 7) % 17});
  const matrix_encoding e = encode_matrix(from_coords(17, 17, coords), {16, 10});
  EXPECT_EQ(std::set<coord>(e.coords.begin(), e.coords.end()).size(), 16u);
}

TEST(matrix_encoding, empty_matrix_has_zero_nonzero_tokens) {
  for (const csr_matrix& a : {csr_from_triplets(100, 50, {}), csr_from_triplets(0, 0, {})}) {
    const matrix_encoding e = encode_matrix(a, {});
    EXPECT_TRUE(e.coords.empty());
    EXPECT_TRUE(std::all_of(token(e, 1), token(e, e.tokens), [](float v) { return v == 0; }));
    EXPECT_TRUE(std::all_of(token(e, 0), token(e, 1), [](float v) { return std::isfinite(v); }));
  }
  EXPECT_NEAR(token(encode_matrix(csr_from_triplets(100, 50, {}), {}), 0)[0],
              std::log(101.0) / (31 * std::log(2.0)), 1e-6);
}

TEST(matrix_encoding, bad_inputs_are_refused_with_the_reason) {
  const csr_matrix a = from_coords(3, 3, {{0, 0}});
  auto message = [&](const matrix_encoding_options& o) {
    try {
      encode_matrix(a, o);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message({128, 7}), HasSubstr("dim must be even"));
  EXPECT_THAT(message({128, 4}), HasSubstr("dim must be even and in [10"));
  EXPECT_THAT(message({0, 32}), HasSubstr("max_nnz must be in [1"));
  EXPECT_THAT(message({128, 32, 1.0}), HasSubstr("base must be a finite number > 1"));

  csr_matrix broken = a;
  broken.row_ptr.pop_back();
  EXPECT_THROW(encode_matrix(broken, {}), error);
  EXPECT_THROW(
      {
        try {
          encode_matrix(a, compute_features(from_coords(4, 4, {{0, 0}})), {});
        } catch (const error& e) {
          EXPECT_THAT(e.what(), HasSubstr("features describe a 4 x 4 matrix"));
          throw;
        }
      },
      error);
}

}  // namespace
}  // namespace sparserl
