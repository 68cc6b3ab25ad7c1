// The realistic (graph) families: structure checks, node orders, determinism.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "sparse/error.h"
#include "sparse/generators.h"
#include "sparse/node_order.h"
#include "structure_checks.h"

namespace sparserl {
namespace {

using ::testing::HasSubstr;
using testing_support::same;
using testing_support::structurally_symmetric;
using testing_support::transpose;

generator_spec spec_for(const std::string& family, int32_t rows = 4000) {
  generator_spec s = default_spec(family);
  s.rows = rows;
  return s;
}

double mean_distance(const csr_matrix& a) {
  double sum = 0;
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) sum += std::abs(a.col_idx[p] - r);
  return sum / static_cast<double>(a.nnz());
}

double mean_row(const csr_matrix& a) { return static_cast<double>(a.nnz()) / a.rows; }

std::multiset<int32_t> row_lengths(const csr_matrix& a) {
  std::multiset<int32_t> out;
  for (int32_t r = 0; r < a.rows; ++r) out.insert(a.row_length(r));
  return out;
}

TEST(RealisticGenerators, RegistryListsThemWithDocumentation) {
  const std::vector<std::string> realistic = realistic_families();
  for (const char* name : {"mesh2d", "mesh3d", "fem_mesh", "knn", "knn_sym", "powerlaw", "road"})
    EXPECT_NE(std::find(realistic.begin(), realistic.end(), name), realistic.end()) << name;
  for (const family_info& f : family_registry()) {
    EXPECT_GT(std::string(f.description).size(), 10u) << f.name;
    EXPECT_GT(std::string(f.counterpart).size(), 5u) << f.name;
  }
  EXPECT_THROW(find_family("nope"), error);
}

TEST(RealisticGenerators, FamilyReadsMatchesWholeFieldNamesOfItsParameters) {
  EXPECT_TRUE(family_reads(find_family("block_diagonal"), "block"));  // the last field
  EXPECT_TRUE(family_reads(find_family("fem"), "block"));             // a middle one
  EXPECT_TRUE(family_reads(find_family("fem_mesh"), "rows"));         // the first
  EXPECT_FALSE(family_reads(find_family("fem_mesh"), "block"));
  EXPECT_FALSE(family_reads(find_family("block_diagonal"), "bloc"));  // no prefix match
  EXPECT_FALSE(family_reads(find_family("mesh2d"), "block"));
}

TEST(RealisticGenerators, EveryOrderIsValidSeededAndDeterministic) {
  for (const std::string& family : realistic_families()) {
    for (const char* order : {"natural", "random", "rcm"}) {
      SCOPED_TRACE(family + " " + order);
      generator_spec s = spec_for(family);
      s.order = order;
      const csr_matrix a = generate_matrix(s);
      EXPECT_NO_THROW(validate_csr(a));
      const csr_matrix again = generate_matrix(s);
      EXPECT_EQ(a.col_idx, again.col_idx);
      EXPECT_EQ(a.values, again.values);
      s.seed = 7;
      EXPECT_NE(generate_matrix(s).col_idx, a.col_idx);
    }
  }
}

TEST(RealisticGenerators, ReorderingIsAPermutationOfTheSameGraph) {
  for (const std::string& family : realistic_families()) {
    SCOPED_TRACE(family);
    generator_spec s = spec_for(family);
    const csr_matrix natural = generate_matrix(s);
    for (const char* order : {"random", "rcm"}) {
      s.order = order;
      const csr_matrix permuted = generate_matrix(s);
      EXPECT_EQ(permuted.rows, natural.rows);
      EXPECT_EQ(permuted.nnz(), natural.nnz());
      EXPECT_EQ(row_lengths(permuted), row_lengths(natural));  // rows moved, not changed
    }
    const std::vector<int32_t> order = node_order("rcm", natural, 1);
    std::vector<int32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (int32_t i = 0; i < static_cast<int32_t>(sorted.size()); ++i) ASSERT_EQ(sorted[i], i);
  }
}

TEST(RealisticGenerators, RcmNarrowsTheBandOfAShuffledGraph) {
  for (const std::string& family : realistic_families()) {
    SCOPED_TRACE(family);
    generator_spec s = spec_for(family);
    s.order = "random";
    const csr_matrix shuffled = generate_matrix(s);
    s.order = "rcm";
    const csr_matrix banded = generate_matrix(s);
    // Hubs keep a power-law graph's band wide; meshes and roads get a band ~ sqrt(n).
    if (family == "powerlaw") {
      EXPECT_LT(mean_distance(banded), mean_distance(shuffled));
    } else {
      EXPECT_LT(matrix_bandwidth(banded), matrix_bandwidth(shuffled) / 4);
      EXPECT_LT(mean_distance(banded), mean_distance(shuffled) / 5);
    }
  }
}

TEST(RealisticGenerators, MeshesAreSymmetricWithTriangleAndTetRowLengths) {
  const csr_matrix m2 = generate_matrix(spec_for("mesh2d", 10000));
  EXPECT_TRUE(structurally_symmetric(m2));
  EXPECT_NEAR(mean_row(m2), 7.0, 0.15);  // 6 neighbours + diagonal, less the boundary
  EXPECT_GE(*row_lengths(m2).begin(), 3);
  EXPECT_LE(*row_lengths(m2).rbegin(), 9);
  const csr_matrix m3 = generate_matrix(spec_for("mesh3d", 27000));
  EXPECT_TRUE(structurally_symmetric(m3));
  EXPECT_NEAR(mean_row(m3), 15.0, 1.5);  // 30^3: the boundary takes its share
  EXPECT_LE(*row_lengths(m3).rbegin(), 27);
}

TEST(RealisticGenerators, FemHasDenseDofBlocks) {
  for (int32_t dof = 1; dof <= 6; ++dof) {
    for (int32_t dims : {2, 3}) {
      SCOPED_TRACE("dof " + std::to_string(dof) + " dims " + std::to_string(dims));
      generator_spec s = spec_for("fem_mesh", 3000);
      s.dof = dof;
      s.dims = dims;
      s.order = "rcm";
      const csr_matrix a = generate_matrix(s);
      ASSERT_EQ(a.rows % dof, 0);
      EXPECT_TRUE(structurally_symmetric(a));
      // Every row of a block row has the same columns, in whole aligned blocks of dof.
      for (int32_t r = 0; r < a.rows; ++r) {
        const int32_t first = r - r % dof;
        ASSERT_EQ(a.row_length(r), a.row_length(first));
        ASSERT_EQ(a.row_length(r) % dof, 0);
        for (int32_t p = 0; p < a.row_length(r); ++p) {
          ASSERT_EQ(a.col_idx[a.row_ptr[r] + p], a.col_idx[a.row_ptr[first] + p]);
          if (p % dof == 0) {
            ASSERT_EQ(a.col_idx[a.row_ptr[r] + p] % dof, 0);
          }
        }
      }
    }
  }
}

TEST(RealisticGenerators, KnnRowsHoldTheKNearest) {
  for (int32_t dims : {2, 3}) {
    generator_spec s = spec_for("knn", 3000);
    s.dims = dims;
    s.neighbors = 10;
    const csr_matrix a = generate_matrix(s);
    for (int32_t r = 0; r < a.rows; ++r) {
      ASSERT_EQ(a.row_length(r), 10);
      for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) ASSERT_NE(a.col_idx[p], r);
    }
    // Natural order is spatial: most neighbours are close in index too.
    s.order = "random";
    int64_t near_natural = 0, near_random = 0;
    const csr_matrix shuffled = generate_matrix(s);
    for (int32_t r = 0; r < a.rows; ++r)
      for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
        near_natural += std::abs(a.col_idx[p] - r) < 300;
        near_random += std::abs(shuffled.col_idx[p] - r) < 300;
      }
    EXPECT_GT(near_natural, 3 * near_random);
  }
}

// knn_sym is knn's pattern plus its transpose: every kNN entry kept, symmetric, rows k..2k-ish.
TEST(RealisticGenerators, KnnSymIsTheSymmetricClosureOfKnn) {
  for (int32_t dims : {2, 3}) {
    SCOPED_TRACE(dims);
    generator_spec s = spec_for("knn", 3000);
    s.dims = dims;
    s.neighbors = 3;
    const csr_matrix knn = generate_matrix(s);
    s.family = "knn_sym";
    const csr_matrix a = generate_matrix(s);
    EXPECT_TRUE(structurally_symmetric(a));
    const csr_matrix closure = [&] {  // A + A^T of the knn pattern, built the slow way
      std::vector<std::set<int32_t>> rows(static_cast<size_t>(knn.rows));
      for (int32_t r = 0; r < knn.rows; ++r)
        for (int32_t p = knn.row_ptr[r]; p < knn.row_ptr[r + 1]; ++p) {
          rows[r].insert(knn.col_idx[p]);
          rows[knn.col_idx[p]].insert(r);
        }
      csr_matrix m;
      m.rows = m.cols = knn.rows;
      m.row_ptr.assign(1, 0);
      for (const auto& row : rows) {
        m.col_idx.insert(m.col_idx.end(), row.begin(), row.end());
        m.row_ptr.push_back(static_cast<int32_t>(m.col_idx.size()));
      }
      return m;
    }();
    EXPECT_EQ(a.row_ptr, closure.row_ptr);
    EXPECT_EQ(a.col_idx, closure.col_idx);
    EXPECT_GE(*row_lengths(a).begin(), 3);
    EXPECT_GT(mean_row(a), 3.3);  // uneven: some rows listed by more than their own neighbours
    EXPECT_LT(mean_row(a), 5.0);
    EXPECT_GT(*row_lengths(a).rbegin(), 5);
  }
}

TEST(RealisticGenerators, PowerlawHasHubsAndASymmetricPattern) {
  generator_spec s = spec_for("powerlaw", 20000);
  s.avg_degree = 10;
  const csr_matrix a = generate_matrix(s);
  EXPECT_TRUE(structurally_symmetric(a));
  EXPECT_NEAR(mean_row(a), 10.0, 1.5);  // repeats and self loops dropped
  int32_t longest = 0;
  for (int32_t r = 0; r < a.rows; ++r) longest = std::max(longest, a.row_length(r));
  EXPECT_GT(longest, 20 * 10);                           // hubs: far above the mean
  EXPECT_GT(a.row_length(0), a.row_length(a.rows - 1));  // natural order: hubs first
}

TEST(RealisticGenerators, RoadHasLowDegree) {
  const csr_matrix a = generate_matrix(spec_for("road", 40000));
  EXPECT_TRUE(structurally_symmetric(a));
  EXPECT_NEAR(mean_row(a) - 1, 2.8, 0.1);  // degree without the diagonal
  EXPECT_LE(*row_lengths(a).rbegin(), 5);
}

TEST(RealisticGenerators, BadParametersAreClearErrors) {
  auto message = [](generator_spec s) {
    try {
      generate_matrix(s);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  generator_spec s = spec_for("fem_mesh");
  s.dof = 7;
  EXPECT_THAT(message(s), HasSubstr("dof must be 1..6"));
  s = spec_for("knn", 10);
  s.neighbors = 10;
  EXPECT_THAT(message(s), HasSubstr("neighbors"));
  s = spec_for("powerlaw");
  s.exponent = 1.5;
  EXPECT_THAT(message(s), HasSubstr("exponent"));
  s = spec_for("mesh2d");
  s.order = "sideways";
  EXPECT_THAT(message(s), HasSubstr("unknown node order"));
  s = spec_for("banded");
  s.order = "rcm";
  EXPECT_THAT(message(s), HasSubstr("the graph families and fem only"));
}

}  // namespace
}  // namespace sparserl
