// Verification tolerance: exact and rounded results pass, poison/NaN/wrong rows fail, and the bound
// scales with the row's length and magnitudes rather than with a cancelled result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "eval/verify.h"
#include "random_data.h"

namespace sparserl {
namespace {

csr_matrix random_matrix(int32_t rows, int32_t cols, int per_row, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> col(0, cols - 1);
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  std::vector<triplet> t;
  for (int32_t r = 0; r < rows; ++r)
    for (int i = 0; i < per_row; ++i) t.push_back({r, col(rng), val(rng)});
  return csr_from_triplets(rows, cols, std::move(t));
}

using testing::random_vector;

// Float accumulation in row order, as a straightforward kernel would do it.
std::vector<float> float_spmv(const csr_matrix& a, const std::vector<float>& x) {
  std::vector<float> y(a.rows);
  for (int32_t r = 0; r < a.rows; ++r) {
    float s = 0;
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) s += a.values[i] * x[a.col_idx[i]];
    y[r] = s;
  }
  return y;
}

TEST(verify, float_accumulation_passes) {
  const csr_matrix a = random_matrix(500, 300, 40, 1);
  const std::vector<float> x = random_vector(300, 2);
  const reference_output ref = compute_reference(sparse_op::spmv, a, x, 1);
  const check_result c = check_output(ref, float_spmv(a, x));
  EXPECT_TRUE(c.ok) << c.describe(sparse_op::spmv, 1);
  EXPECT_LE(c.max_error_ratio, 1.0);
}

TEST(verify, poisoned_element_fails_and_is_counted) {
  const csr_matrix a = random_matrix(100, 100, 5, 3);
  const std::vector<float> x = random_vector(100, 4);
  const reference_output ref = compute_reference(sparse_op::spmv, a, x, 1);
  std::vector<float> y = ref.value;
  const uint32_t poison = 0x7fc0dead;
  std::memcpy(&y[37], &poison, 4);
  const check_result c = check_output(ref, y);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.bad_elements, 1);
  EXPECT_EQ(c.poisoned_elements, 1);
  EXPECT_EQ(c.first_bad, 37);
  EXPECT_NE(c.describe(sparse_op::spmv, 1).find("y[37]"), std::string::npos);
}

TEST(verify, infinity_never_passes) {
  const csr_matrix a = random_matrix(10, 10, 3, 5);
  const reference_output ref = compute_reference(sparse_op::spmv, a, random_vector(10, 6), 1);
  std::vector<float> y = ref.value;
  y[2] = INFINITY;
  EXPECT_FALSE(check_output(ref, y).ok);
}

TEST(verify, small_relative_error_in_one_row_fails) {
  const csr_matrix a = random_matrix(200, 200, 8, 7);
  const std::vector<float> x = random_vector(200, 8);
  const reference_output ref = compute_reference(sparse_op::spmv, a, x, 1);
  std::vector<float> y = ref.value;
  // One term's worth of error (the smallest |a_ij x_j| of row 0 dropped) is far beyond rounding.
  float smallest = INFINITY;
  for (int32_t i = a.row_ptr[0]; i < a.row_ptr[1]; ++i)
    smallest = std::min(smallest, std::fabs(a.values[i] * x[a.col_idx[i]]));
  y[0] += std::max(smallest, 1e-3f);
  const check_result c = check_output(ref, y);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.first_bad, 0);
}

TEST(verify, empty_row_must_be_exactly_zero) {
  const csr_matrix a = csr_from_triplets(3, 3, {{0, 0, 1.f}, {2, 2, 1.f}});
  const std::vector<float> x = {1.f, 2.f, 3.f};
  const reference_output ref = compute_reference(sparse_op::spmv, a, x, 1);
  EXPECT_TRUE(check_output(ref, {1.f, 0.f, 3.f}).ok);
  EXPECT_FALSE(check_output(ref, {1.f, 1e-20f, 3.f}).ok);
}

TEST(verify, cancellation_is_judged_against_term_magnitudes) {
  // Row 0 sums 1e4 - 1e4 + 1: the float result may be off by a few ulps of 1e4, which is fine.
  const csr_matrix a = csr_from_triplets(1, 3, {{0, 0, 1e4f}, {0, 1, -1e4f}, {0, 2, 1.f}});
  const std::vector<float> x = {1.f, 1.f, 1.f};
  const reference_output ref = compute_reference(sparse_op::spmv, a, x, 1);
  EXPECT_TRUE(check_output(ref, {1.0f + 2e-3f}).ok);
  EXPECT_FALSE(check_output(ref, {1.5f}).ok);
}

TEST(verify, spmm_checks_every_column) {
  const csr_matrix a = random_matrix(60, 40, 6, 9);
  const int32_t k = 8;
  const std::vector<float> b = random_vector(40 * k, 10);
  const reference_output ref = compute_reference(sparse_op::spmm, a, b, k);
  ASSERT_EQ(ref.value.size(), size_t{60 * 8});
  EXPECT_TRUE(check_output(ref, ref.value).ok);
  std::vector<float> c = ref.value;
  c[5 * k + 7] = -c[5 * k + 7] - 1.f;
  const check_result r = check_output(ref, c);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.describe(sparse_op::spmm, k).find("C[5][7]"), std::string::npos);
}

TEST(verify, wrong_length_output_fails) {
  const csr_matrix a = random_matrix(10, 10, 2, 11);
  const reference_output ref = compute_reference(sparse_op::spmv, a, random_vector(10, 12), 1);
  EXPECT_FALSE(check_output(ref, std::vector<float>(9, 0.f)).ok);
}

}  // namespace
}  // namespace sparserl
