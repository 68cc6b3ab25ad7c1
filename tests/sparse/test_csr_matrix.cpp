#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "sparse/csr_matrix.h"
#include "sparse/error.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Random triplets whose values are multiples of 1/4 in [-8, 8]: every sum of a few of them is
// exact in float, so the expected results do not depend on summation order.
std::vector<triplet> random_triplets(int32_t rows, int32_t cols, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<triplet> out;
  for (int i = 0; i < count; ++i)
    out.push_back({static_cast<int32_t>(rng() % rows), static_cast<int32_t>(rng() % cols),
                   static_cast<float>(static_cast<int>(rng() % 65) - 32) / 4.0f});
  return out;
}

// The naive model: a dense row-major matrix, duplicates added up.
std::vector<double> dense_of(int32_t rows, int32_t cols, const std::vector<triplet>& entries) {
  std::vector<double> dense(static_cast<size_t>(rows) * cols, 0.0);
  for (const triplet& t : entries) dense[static_cast<size_t>(t.row) * cols + t.col] += t.value;
  return dense;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> out(n);
  for (float& v : out) v = dist(rng);
  return out;
}

csr_matrix small_valid() {  // [[1 0 2], [0 0 0], [0 3 0]]
  return csr_from_triplets(3, 3, {{0, 0, 1.0f}, {0, 2, 2.0f}, {2, 1, 3.0f}});
}

void expect_invalid(const csr_matrix& m, const std::string& why) {
  EXPECT_THAT([&] { validate_csr(m); }, ThrowsMessage<error>(HasSubstr(why)));
}

// ---- csr_from_triplets ---------------------------------------------------------------------

TEST(csr_from_triplets, sorts_rows_and_columns) {
  const csr_matrix m = csr_from_triplets(
      3, 4, {{2, 3, 1.0f}, {0, 2, 2.0f}, {2, 0, 3.0f}, {0, 1, 4.0f}, {1, 3, 5.0f}});
  EXPECT_EQ(m.row_ptr, (std::vector<int32_t>{0, 2, 3, 5}));
  EXPECT_EQ(m.col_idx, (std::vector<int32_t>{1, 2, 3, 0, 3}));
  EXPECT_EQ(m.values, (std::vector<float>{4.0f, 2.0f, 5.0f, 3.0f, 1.0f}));
  validate_csr(m);
}

TEST(csr_from_triplets, sums_duplicates) {
  const csr_matrix m =
      csr_from_triplets(2, 2, {{1, 1, 1.5f}, {0, 0, 1.0f}, {1, 1, 2.0f}, {1, 1, -0.25f}});
  EXPECT_EQ(m.nnz(), 2);
  EXPECT_EQ(m.col_idx, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(m.values, (std::vector<float>{1.0f, 1.5f + 2.0f - 0.25f}));
}

// Row 1 arrives already sorted (the fast path) but must still move left past row 0's merge.
TEST(csr_from_triplets, compacts_sorted_rows_after_merged_duplicates) {
  const csr_matrix m = csr_from_triplets(
      3, 3, {{0, 1, 1.0f}, {0, 1, 2.0f}, {1, 0, 3.0f}, {1, 2, 4.0f}, {2, 2, 5.0f}, {2, 2, 6.0f}});
  EXPECT_EQ(m.row_ptr, (std::vector<int32_t>{0, 1, 3, 4}));
  EXPECT_EQ(m.col_idx, (std::vector<int32_t>{1, 0, 2, 2}));
  EXPECT_EQ(m.values, (std::vector<float>{3.0f, 3.0f, 4.0f, 11.0f}));
  validate_csr(m);
}

TEST(csr_from_triplets, matches_a_dense_model_on_random_input) {
  const int32_t rows = 40, cols = 30;
  const auto entries = random_triplets(rows, cols, 900, 11);  // many duplicates
  const csr_matrix m = csr_from_triplets(rows, cols, entries);
  validate_csr(m);
  const auto dense = dense_of(rows, cols, entries);
  std::vector<bool> present(dense.size(), false);
  for (const triplet& t : entries) present[static_cast<size_t>(t.row) * cols + t.col] = true;
  EXPECT_EQ(m.nnz(), std::count(present.begin(), present.end(), true));
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t i = m.row_ptr[r]; i < m.row_ptr[r + 1]; ++i)
      EXPECT_EQ(m.values[i], dense[static_cast<size_t>(r) * cols + m.col_idx[i]]);
}

TEST(csr_from_triplets, keeps_empty_rows_and_empty_matrices) {
  const csr_matrix gaps = csr_from_triplets(5, 2, {{3, 1, 1.0f}});
  EXPECT_EQ(gaps.row_ptr, (std::vector<int32_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(gaps.row_length(3), 1);
  const csr_matrix empty = csr_from_triplets(0, 0, {});
  EXPECT_EQ(empty.row_ptr, (std::vector<int32_t>{0}));
  EXPECT_EQ(empty.nnz(), 0);
  validate_csr(gaps);
  validate_csr(empty);
}

TEST(csr_from_triplets, rejects_out_of_bounds_entries) {
  for (const triplet& bad :
       {triplet{3, 0, 1.0f}, triplet{0, 4, 1.0f}, triplet{-1, 0, 1.0f}, triplet{0, -1, 1.0f}}) {
    EXPECT_THAT(
        [&] {
          csr_from_triplets(3, 4, {{0, 0, 1.0f}, bad});
        },
        ThrowsMessage<error>(HasSubstr("entry 1 at (" + std::to_string(bad.row) + ", " +
                                       std::to_string(bad.col) + ") is outside the 3 x 4 matrix")));
  }
}

TEST(csr_from_triplets, rejects_negative_dimensions) {
  EXPECT_THAT([] { csr_from_triplets(-1, 3, {}); },
              ThrowsMessage<error>(HasSubstr("must be non-negative")));
}

// ---- validate_csr --------------------------------------------------------------------------

TEST(validate_csr, accepts_a_valid_matrix) { EXPECT_NO_THROW(validate_csr(small_valid())); }

TEST(validate_csr, rejects_negative_dimensions) {
  csr_matrix m = small_valid();
  m.cols = -1;
  expect_invalid(m, "negative dimensions");
}

TEST(validate_csr, rejects_a_row_ptr_of_the_wrong_length) {
  csr_matrix m = small_valid();
  m.row_ptr.push_back(3);
  expect_invalid(m, "row_ptr has wrong length");
}

TEST(validate_csr, rejects_a_nonzero_first_row_ptr) {
  csr_matrix m = small_valid();
  m.row_ptr[0] = 1;
  expect_invalid(m, "row_ptr[0] != 0");
}

TEST(validate_csr, rejects_columns_and_values_of_different_lengths) {
  csr_matrix m = small_valid();
  m.values.pop_back();
  expect_invalid(m, "col_idx and values differ in length");
}

TEST(validate_csr, rejects_a_last_row_ptr_other_than_nnz) {
  csr_matrix m = small_valid();
  m.row_ptr.back() = 2;
  expect_invalid(m, "row_ptr[rows] != nnz");
}

TEST(validate_csr, rejects_a_decreasing_row_ptr) {
  csr_matrix m = small_valid();  // row_ptr {0, 2, 2, 3}
  m.row_ptr[1] = 1;
  m.row_ptr[2] = 0;
  expect_invalid(m, "row_ptr decreases at row 1");
  // A middle entry past nnz must be caught before any column is read through it.
  m.row_ptr = {0, 7, 2, 3};
  expect_invalid(m, "row_ptr decreases at row 1");
}

TEST(validate_csr, rejects_a_column_out_of_range) {
  csr_matrix m = small_valid();
  m.col_idx[2] = 3;
  expect_invalid(m, "column out of range in row 2");
  m.col_idx[2] = -1;
  expect_invalid(m, "column out of range in row 2");
}

TEST(validate_csr, rejects_unsorted_or_repeated_columns) {
  csr_matrix m = small_valid();
  std::swap(m.col_idx[0], m.col_idx[1]);
  expect_invalid(m, "columns not strictly ascending in row 0");
  m.col_idx[0] = m.col_idx[1] = 2;
  expect_invalid(m, "columns not strictly ascending in row 0");
}

// ---- reference SpMV / SpMM against the dense model --------------------------------------

TEST(spmv_reference, matches_dense_multiplication) {
  const int32_t rows = 57, cols = 43;
  auto entries = random_triplets(rows, cols, 600, 3);
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const triplet& t) { return t.row % 5 == 0; }),
                entries.end());  // some empty rows
  const csr_matrix m = csr_from_triplets(rows, cols, entries);
  const auto dense = dense_of(rows, cols, entries);
  const auto x = random_floats(cols, 4);
  std::vector<float> y(rows, -1.0f);
  spmv_reference(m, x.data(), y.data());
  for (int32_t r = 0; r < rows; ++r) {
    double expected = 0;
    for (int32_t c = 0; c < cols; ++c) expected += dense[static_cast<size_t>(r) * cols + c] * x[c];
    EXPECT_FLOAT_EQ(y[r], static_cast<float>(expected)) << "row " << r;
  }
}

TEST(spmm_reference, matches_dense_multiplication) {
  const int32_t rows = 31, cols = 26;
  auto entries = random_triplets(rows, cols, 300, 8);
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const triplet& t) { return t.row % 7 == 3; }),
                entries.end());
  const csr_matrix m = csr_from_triplets(rows, cols, entries);
  const auto dense = dense_of(rows, cols, entries);
  for (const int32_t k : {1, 3, 8}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    const auto b = random_floats(static_cast<size_t>(cols) * k, 9 + k);
    std::vector<float> c(static_cast<size_t>(rows) * k, -1.0f);
    spmm_reference(m, b.data(), k, c.data());
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t j = 0; j < k; ++j) {
        double expected = 0;
        for (int32_t q = 0; q < cols; ++q)
          expected += dense[static_cast<size_t>(r) * cols + q] * b[static_cast<size_t>(q) * k + j];
        EXPECT_FLOAT_EQ(c[static_cast<size_t>(r) * k + j], static_cast<float>(expected))
            << "(" << r << ", " << j << ")";
      }
  }
}

TEST(distance_from_diagonal, is_the_largest_and_the_mean_over_the_nonzeros) {
  // |col - row|: 4; 1, 1, 2; 2, 3 -> at most 4, 13 / 6 on average.
  const csr_matrix m = csr_from_triplets(
      4, 5, {{0, 4, 1.f}, {1, 0, 1.f}, {1, 2, 1.f}, {1, 3, 1.f}, {3, 1, 1.f}, {3, 0, 1.f}});
  const diagonal_distance d = distance_from_diagonal(m);
  EXPECT_EQ(d.largest, 4);
  EXPECT_DOUBLE_EQ(d.mean, 13.0 / 6.0);
  const diagonal_distance empty = distance_from_diagonal(csr_from_triplets(3, 3, {}));
  EXPECT_EQ(empty.largest, 0);
  EXPECT_EQ(empty.mean, 0.0);
}

TEST(distance_from_diagonal, a_random_node_order_lies_far_from_it) {
  // One 2D mesh in its natural and in a random order: the random order's columns lie on average
  // about a third of the width away (a shuffled x), the natural order's near the row.
  generator_spec spec = default_spec("mesh2d");
  spec.rows = 4000;
  const csr_matrix natural = generate_matrix(spec);
  spec.order = "random";
  const csr_matrix random = generate_matrix(spec);
  ASSERT_EQ(natural.nnz(), random.nnz());
  const double width = static_cast<double>(natural.rows);
  EXPECT_LT(distance_from_diagonal(natural).mean, 0.05 * width);
  EXPECT_GT(distance_from_diagonal(random).mean, 0.25 * width);
  EXPECT_GT(distance_from_diagonal(random).largest, distance_from_diagonal(natural).largest);
}

}  // namespace
}  // namespace sparserl
