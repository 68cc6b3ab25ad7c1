// Block-shape detection: FEM matrices with k degrees of freedom per node are made of dense k x k
// blocks, and detect_block_shape must find k (not only powers of two), in every node order.
#include <gtest/gtest.h>

#include <string>

#include "sparse/block_shape.h"
#include "sparse/features.h"
#include "sparse/formats.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

csr_matrix fem_mesh(int32_t dof, int32_t dims, const std::string& order, int32_t rows = 6000) {
  generator_spec s = default_spec("fem_mesh");
  s.rows = rows;
  s.dof = dof;
  s.dims = dims;
  s.order = order;
  s.seed = 11;
  return generate_matrix(s);
}

TEST(BlockShape, FemMeshBlocksAreTheDofInEveryOrder) {
  for (int32_t dims : {2, 3})
    for (const char* order : {"natural", "random", "rcm"})
      for (int32_t dof = 1; dof <= 6; ++dof) {
        SCOPED_TRACE("dims " + std::to_string(dims) + ", " + order + ", dof " +
                     std::to_string(dof));
        const csr_matrix a = fem_mesh(dof, dims, order);
        const block_shape shape = detect_block_shape(a);
        EXPECT_EQ(shape.size, dof);
        if (dof > 1) {
          EXPECT_DOUBLE_EQ(shape.fill, 1.0);  // every dof x dof block is dense
        }
        const matrix_features f = compute_features(a);
        EXPECT_EQ(f.block_size, dof);
        EXPECT_DOUBLE_EQ(f.block_size_fill, shape.fill);
      }
}

// BSR with the detected shape stores exactly the nonzeros (no padding) and gives CSR's SpMV.
TEST(BlockShape, BsrWithTheDetectedShapeHasNoPadding) {
  for (int32_t dof : {3, 5, 6}) {
    const csr_matrix a = fem_mesh(dof, 2, "random", 3000);
    const bsr_matrix b = to_bsr(a, dof, dof);
    EXPECT_EQ(static_cast<int64_t>(b.values.size()), a.nnz()) << "dof " << dof;
    std::vector<float> x(static_cast<size_t>(a.cols)), want(a.rows), got(a.rows);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f + static_cast<float>(i % 17) / 16.0f;
    spmv_reference(a, x.data(), want.data());
    spmv(b, x.data(), got.data());
    for (int32_t r = 0; r < a.rows; ++r)
      ASSERT_NEAR(got[r], want[r], 1e-4f * (1 + std::abs(want[r])));
  }
}

TEST(BlockShape, UnblockedAndEdgeMatrices) {
  EXPECT_EQ(detect_block_shape(csr_from_triplets(0, 0, {})).size, 1);
  EXPECT_EQ(detect_block_shape(csr_from_triplets(4, 4, {})).size, 1);
  // A diagonal: 1 x 1 blocks only (rows of length 1 are not divisible by any b >= 2).
  std::vector<triplet> diag;
  for (int32_t i = 0; i < 300; ++i) diag.push_back({i, i, 1.0f});
  EXPECT_EQ(detect_block_shape(csr_from_triplets(300, 300, diag)).size, 1);
  // Row lengths divisible by 3 but the columns scattered: 3 x 3 blocks are sparse, refused.
  std::vector<triplet> scattered;
  for (int32_t i = 0; i < 300; ++i)
    for (int32_t j = 0; j < 3; ++j) scattered.push_back({i, (i * 37 + j * 101) % 300, 1.0f});
  const csr_matrix s = csr_from_triplets(300, 300, scattered);
  EXPECT_LT(block_fill(s, 3), 0.9);
  EXPECT_EQ(detect_block_shape(s).size, 1);
  // A dense 12 x 12 matrix blocks at the largest size allowed.
  std::vector<triplet> dense;
  for (int32_t i = 0; i < 12; ++i)
    for (int32_t j = 0; j < 12; ++j) dense.push_back({i, j, 1.0f});
  EXPECT_EQ(detect_block_shape(csr_from_triplets(12, 12, dense), 8).size,
            6);  // 8 does not divide 12
  EXPECT_EQ(detect_block_shape(csr_from_triplets(12, 12, dense), 4).size, 4);
}

}  // namespace
}  // namespace sparserl
