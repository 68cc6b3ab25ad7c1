// Property tests of the storage formats: for seeded random matrices (edge cases, power-law row
// lengths, bands, blocks) and many parameter choices, each layout must hold exactly the CSR
// entries where the ABI says, and its SpMV must equal spmv_reference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sparse/csr_matrix.h"
#include "sparse/error.h"
#include "sparse/formats.h"
#include "sparse/node_order.h"

namespace sparserl {
namespace {

using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------------
// Matrices

float random_value(std::mt19937_64& rng) {  // never 0, so stored zeros are always padding
  std::uniform_real_distribution<float> magnitude(0.25f, 2.0f);
  return (rng() & 1) ? magnitude(rng) : -magnitude(rng);
}

// Row lengths uniform in [0, 2 * mean] or Pareto-like (a third of the rows empty, a heavy tail);
// columns drawn with replacement (duplicates are summed by csr_from_triplets).
csr_matrix random_matrix(int32_t rows, int32_t cols, double mean, bool power_law, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(1e-9, 1.0);
  std::uniform_int_distribution<int32_t> col(0, std::max(cols - 1, 0));
  std::vector<triplet> entries;
  for (int32_t r = 0; r < rows && cols > 0; ++r) {
    double len = power_law ? (unit(rng) < 0.33 ? 0.0 : mean / 3.0 / std::pow(unit(rng), 1 / 1.5))
                           : unit(rng) * 2 * mean;
    const auto n = static_cast<int32_t>(std::min<double>(len, cols));
    for (int32_t k = 0; k < n; ++k) entries.push_back({r, col(rng), random_value(rng)});
  }
  return csr_from_triplets(rows, cols, std::move(entries));
}

// `diags` random diagonals (plus the main one), each cell present with probability `p`.
csr_matrix banded_matrix(int32_t rows, int32_t cols, int32_t diags, double p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> offset(-(rows - 1), cols - 1);
  std::bernoulli_distribution keep(p);
  std::set<int32_t> offsets{0};
  while (static_cast<int32_t>(offsets.size()) < diags + 1) offsets.insert(offset(rng));
  std::vector<triplet> entries;
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t off : offsets)
      if (r + off >= 0 && r + off < cols && keep(rng)) entries.push_back({r, r + off, 1.0f});
  for (triplet& t : entries) t.value = random_value(rng);
  return csr_from_triplets(rows, cols, std::move(entries));
}

// `blocks` dense, aligned bs x bs blocks (clipped at the edges).
csr_matrix block_matrix(int32_t rows, int32_t cols, int32_t bs, int32_t blocks, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> brow(0, (rows - 1) / bs), bcol(0, (cols - 1) / bs);
  std::vector<triplet> entries;
  for (int32_t b = 0; b < blocks; ++b) {
    const int32_t r0 = brow(rng) * bs, c0 = bcol(rng) * bs;
    for (int32_t i = r0; i < std::min(rows, r0 + bs); ++i)
      for (int32_t j = c0; j < std::min(cols, c0 + bs); ++j)
        entries.push_back({i, j, random_value(rng)});
  }
  return csr_from_triplets(rows, cols, std::move(entries));
}

// Short random rows plus one row holding `long_len` distinct columns.
csr_matrix long_row_matrix(int32_t rows, int32_t cols, int32_t long_row, int32_t long_len,
                           uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> all(static_cast<size_t>(cols));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<triplet> entries;
  for (int32_t k = 0; k < long_len; ++k) entries.push_back({long_row, all[k], random_value(rng)});
  std::uniform_int_distribution<int32_t> col(0, cols - 1), len(0, 4);
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t k = len(rng); r != long_row && k > 0; --k)
      entries.push_back({r, col(rng), random_value(rng)});
  return csr_from_triplets(rows, cols, std::move(entries));
}

std::vector<float> random_x(int32_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = u(rng);
  return x;
}

// A test matrix with its SpMV input, the reference output and the per-row tolerance: every
// format and parameter choice is compared against the same reference.
struct named_matrix {
  std::string name;
  csr_matrix a;
  std::vector<float> x, want;
  std::vector<double> tolerance;

  named_matrix(std::string label, csr_matrix m) : name(std::move(label)), a(std::move(m)) {
    x = random_x(a.cols, 7 + a.nnz());
    want.resize(static_cast<size_t>(a.rows));
    spmv_reference(a, x.data(), want.data());
    // Both sides accumulate in double, possibly in different orders, so they differ by at most
    // a float rounding of the row's magnitude: the bound is relative to sum |a_ij x_j|, which
    // grows with the row length.
    tolerance.resize(want.size());
    for (int32_t r = 0; r < a.rows; ++r) {
      double magnitude = 0;
      for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i)
        magnitude += std::fabs(double{a.values[i]} * x[a.col_idx[i]]);
      tolerance[r] = 1e-6 * magnitude;
    }
  }
};

std::vector<named_matrix> build_matrices() {
  std::vector<named_matrix> m;
  uint64_t seed = 1000;
  m.push_back({"0x0", csr_from_triplets(0, 0, {})});
  m.push_back({"0x7", csr_from_triplets(0, 7, {})});
  m.push_back({"7x0", csr_from_triplets(7, 0, {})});
  m.push_back({"5x9 without nonzeros", csr_from_triplets(5, 9, {})});
  m.push_back({"9x5 without nonzeros", csr_from_triplets(9, 5, {})});
  m.push_back({"1x1 without nonzeros", csr_from_triplets(1, 1, {})});
  m.push_back({"1x1", csr_from_triplets(1, 1, {{0, 0, -1.5f}})});
  // Wide and sparse: DIA collects offsets by sorting instead of a presence map over rows + cols.
  m.push_back({"4x100000 3 diagonals", banded_matrix(4, 100000, 3, 1.0, ++seed)});
  m.push_back({"37x53 last corner only", csr_from_triplets(37, 53, {{36, 52, 2.0f}})});
  m.push_back({"100x50000 one 40000-entry row", long_row_matrix(100, 50000, 37, 40000, ++seed)});
  m.push_back({"20000x20000 one full row", long_row_matrix(20000, 20000, 19999, 20000, ++seed)});
  const std::vector<std::pair<int32_t, int32_t>> shapes = {{1, 1000},    {1000, 1},   {17, 33},
                                                           {64, 64},     {100, 37},   {37, 100},
                                                           {1023, 1025}, {2000, 300}, {300, 2000}};
  for (auto [rows, cols] : shapes)
    for (double mean : {0.5, 3.0, 20.0})
      m.push_back({std::to_string(rows) + "x" + std::to_string(cols) + " uniform mean " +
                       std::to_string(mean),
                   random_matrix(rows, cols, mean, false, ++seed)});
  for (auto [rows, cols] :
       std::vector<std::pair<int32_t, int32_t>>{{2000, 2000}, {3000, 500}, {500, 3000}, {777, 777}})
    m.push_back({std::to_string(rows) + "x" + std::to_string(cols) + " power law",
                 random_matrix(rows, cols, 8.0, true, ++seed)});
  m.push_back({"1000x1000 7 diagonals", banded_matrix(1000, 1000, 7, 0.9, ++seed)});
  m.push_back({"500x800 12 diagonals", banded_matrix(500, 800, 12, 0.5, ++seed)});
  m.push_back({"800x500 3 diagonals", banded_matrix(800, 500, 3, 1.0, ++seed)});
  m.push_back({"999x1000 4x4 blocks", block_matrix(999, 1000, 4, 600, ++seed)});
  m.push_back({"301x300 3x3 blocks", block_matrix(301, 300, 3, 200, ++seed)});
  return m;
}

const std::vector<named_matrix>& matrices() {
  static const std::vector<named_matrix> all = build_matrices();
  return all;
}

// ---------------------------------------------------------------------------------------------
// SpMV comparison

// Runs `spmv_of(x, y)` on a NaN-poisoned y and compares it with the reference.
template <typename F>
AssertionResult matches_reference(const named_matrix& m, F spmv_of) {
  std::vector<float> got(m.want.size(), std::numeric_limits<float>::quiet_NaN());
  spmv_of(m.x.data(), got.data());
  for (int32_t r = 0; r < m.a.rows; ++r)
    if (!(std::fabs(double{got[r]} - m.want[r]) <= m.tolerance[r]))  // NaN fails
      return AssertionFailure() << "row " << r << " (length " << m.a.row_length(r) << "): got "
                                << got[r] << ", reference " << m.want[r] << ", tolerance "
                                << m.tolerance[r];
  return AssertionSuccess();
}

// A layout that converts back: to_csr gives the matrix exactly, and its own SpMV matches the
// reference (CSR16, RCSR).
template <typename Layout>
void expect_round_trip(const named_matrix& m, const Layout& c) {
  const csr_matrix back = to_csr(c);
  EXPECT_EQ(back.rows, m.a.rows);
  EXPECT_EQ(back.cols, m.a.cols);
  EXPECT_EQ(back.row_ptr, m.a.row_ptr);
  EXPECT_EQ(back.col_idx, m.a.col_idx);
  EXPECT_EQ(back.values, m.a.values);
  EXPECT_TRUE(matches_reference(m, [&](const float* x, float* y) { spmv(c, x, y); }));
}

int32_t longest_row(const csr_matrix& a) {
  int32_t n = 0;
  for (int32_t r = 0; r < a.rows; ++r) n = std::max(n, a.row_length(r));
  return n;
}

// ---------------------------------------------------------------------------------------------
// Structural checks: each compares the layout, cell by cell, with the CSR entries.

AssertionResult check_coo(const csr_matrix& a, const coo_matrix& coo) {
  if (coo.rows != a.rows || coo.cols != a.cols || coo.nnz() != a.nnz() ||
      coo.row_idx.size() != coo.values.size() || coo.col_idx.size() != coo.values.size())
    return AssertionFailure() << "COO dimensions or array sizes differ from the CSR";
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i)
      if (coo.row_idx[i] != r || coo.col_idx[i] != a.col_idx[i] || coo.values[i] != a.values[i])
        return AssertionFailure() << "COO entry " << i << " is not CSR entry " << i;
  return AssertionSuccess();
}

// ELL of the first `width` entries of each row (to_ell: width = longest row; HYB: its ELL part).
AssertionResult check_ell(const csr_matrix& a, const ell_matrix& ell, int32_t width) {
  if (ell.rows != a.rows || ell.cols != a.cols || ell.width != width)
    return AssertionFailure() << "ELL is " << ell.rows << " x " << ell.cols << " width "
                              << ell.width << ", expected width " << width;
  const auto size = static_cast<size_t>(int64_t{a.rows} * width);
  if (ell.col_idx.size() != size || ell.values.size() != size)
    return AssertionFailure() << "ELL arrays are not rows * width long";
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t j = 0; j < width; ++j) {
      const int64_t at = int64_t{j} * a.rows + r;
      const bool real = j < a.row_length(r);
      const int32_t col = real ? a.col_idx[a.row_ptr[r] + j] : -1;
      const float value = real ? a.values[a.row_ptr[r] + j] : 0.0f;
      if (ell.col_idx[at] != col || ell.values[at] != value)
        return AssertionFailure() << "ELL slot " << j << " of row " << r << " holds ("
                                  << ell.col_idx[at] << ", " << ell.values[at] << "), expected ("
                                  << col << ", " << value << ")";
    }
  return AssertionSuccess();
}

// perm is a permutation that maps each sigma-window onto itself, with lengths non-increasing
// inside it and ties in the original order (stable sort).
AssertionResult check_sell_perm(const csr_matrix& a, const sell_matrix& s) {
  if (s.perm.size() != static_cast<size_t>(a.rows)) return AssertionFailure() << "perm size";
  std::vector<int32_t> sorted = s.perm;
  std::sort(sorted.begin(), sorted.end());
  for (int32_t i = 0; i < a.rows; ++i)
    if (sorted[i] != i) return AssertionFailure() << "perm is not a permutation of the rows";
  for (int64_t i = 0; i < a.rows; ++i) {
    if (s.perm[i] / s.sigma != i / s.sigma)
      return AssertionFailure() << "perm[" << i << "] = " << s.perm[i] << " leaves its window";
    if (i % s.sigma == 0) continue;  // the first of a window has nothing to compare to
    const int32_t prev = a.row_length(s.perm[i - 1]), cur = a.row_length(s.perm[i]);
    if (cur > prev || (cur == prev && s.perm[i] < s.perm[i - 1]))
      return AssertionFailure() << "sorted positions " << i - 1 << ", " << i
                                << " are out of (descending length, stable) order";
  }
  return AssertionSuccess();
}

AssertionResult check_sell(const csr_matrix& a, const sell_matrix& s, int32_t C, int32_t sigma) {
  const int32_t slices = static_cast<int32_t>((int64_t{a.rows} + C - 1) / C);
  if (s.rows != a.rows || s.cols != a.cols || s.C != C || s.sigma != sigma ||
      s.num_slices != slices || s.slice_ptr.size() != static_cast<size_t>(slices) + 1 ||
      s.slice_width.size() != static_cast<size_t>(slices) || s.slice_ptr[0] != 0)
    return AssertionFailure() << "SELL header or slice arrays are wrong";
  if (AssertionResult perm = check_sell_perm(a, s); !perm) return perm;
  for (int32_t sl = 0; sl < slices; ++sl) {
    if (s.slice_ptr[sl + 1] - s.slice_ptr[sl] != s.slice_width[sl] * C)
      return AssertionFailure() << "slice " << sl << " does not span slice_width * C elements";
    int32_t widest = 0;
    for (int32_t l = 0; l < C; ++l) {
      const int64_t i = int64_t{sl} * C + l;
      const int32_t row = i < a.rows ? s.perm[i] : -1;
      const int32_t len = row >= 0 ? a.row_length(row) : 0;
      widest = std::max(widest, len);
      if (len > s.slice_width[sl])
        return AssertionFailure() << "row " << row << " is longer than slice " << sl;
      for (int32_t j = 0; j < s.slice_width[sl]; ++j) {
        const int64_t at = s.slice_ptr[sl] + int64_t{j} * C + l;
        const int32_t col = j < len ? a.col_idx[a.row_ptr[row] + j] : -1;
        const float value = j < len ? a.values[a.row_ptr[row] + j] : 0.0f;
        if (s.col_idx[at] != col || s.values[at] != value)
          return AssertionFailure()
                 << "slice " << sl << " lane " << l << " element " << j << " is wrong";
      }
    }
    if (widest != s.slice_width[sl])
      return AssertionFailure() << "slice " << sl << " is wider than its longest row";
  }
  if (s.col_idx.size() != static_cast<size_t>(s.slice_ptr[slices]) ||
      s.values.size() != s.col_idx.size())
    return AssertionFailure() << "SELL arrays are not slice_ptr[num_slices] long";
  return AssertionSuccess();
}

AssertionResult check_bsr(const csr_matrix& a, const bsr_matrix& b, int32_t r, int32_t c) {
  const int32_t block_rows = (a.rows + r - 1) / r, block_cols = (a.cols + c - 1) / c;
  if (b.rows != a.rows || b.cols != a.cols || b.r != r || b.c != c || b.block_rows != block_rows ||
      b.block_cols != block_cols || b.block_row_ptr.size() != static_cast<size_t>(block_rows) + 1 ||
      b.block_row_ptr[0] != 0 || b.values.size() != static_cast<size_t>(b.nnz_blocks() * r * c))
    return AssertionFailure() << "BSR header or array sizes are wrong";
  int64_t nonzero_cells = 0;
  for (float v : b.values) nonzero_cells += v != 0.0f;
  int64_t nonzero_entries = 0;
  for (int32_t br = 0; br < block_rows; ++br) {
    std::set<int32_t> want;  // block columns holding at least one entry
    for (int32_t row = br * r; row < std::min(a.rows, br * r + r); ++row)
      for (int32_t i = a.row_ptr[row]; i < a.row_ptr[row + 1]; ++i) want.insert(a.col_idx[i] / c);
    const auto first = b.block_col_idx.begin() + b.block_row_ptr[br];
    const auto last = b.block_col_idx.begin() + b.block_row_ptr[br + 1];
    if (!std::equal(first, last, want.begin(), want.end()))
      return AssertionFailure() << "block row " << br
                                << " does not hold exactly its nonempty block columns, ascending";
    for (int32_t row = br * r; row < std::min(a.rows, br * r + r); ++row)
      for (int32_t i = a.row_ptr[row]; i < a.row_ptr[row + 1]; ++i) {
        const int64_t blk =
            std::lower_bound(first, last, a.col_idx[i] / c) - b.block_col_idx.begin();
        const int64_t cell = blk * r * c + (row - br * r) * c + a.col_idx[i] % c;
        if (b.values[cell] != a.values[i])
          return AssertionFailure() << "entry (" << row << ", " << a.col_idx[i] << ") is wrong";
        nonzero_entries += a.values[i] != 0.0f;
      }
  }
  // Every entry sits in its cell, so any further nonzero cell would be garbage.
  if (nonzero_cells != nonzero_entries)
    return AssertionFailure() << nonzero_cells << " nonzero cells for " << nonzero_entries
                              << " nonzero entries";
  return AssertionSuccess();
}

std::vector<int32_t> csr_offsets(const csr_matrix& a) {
  std::set<int32_t> offsets;
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) offsets.insert(a.col_idx[i] - r);
  return {offsets.begin(), offsets.end()};
}

AssertionResult check_dia(const csr_matrix& a, const dia_matrix& d) {
  const std::vector<int32_t> offsets = csr_offsets(a);
  if (d.rows != a.rows || d.cols != a.cols || d.offsets != offsets ||
      d.num_diags != static_cast<int32_t>(offsets.size()) ||
      d.values.size() != offsets.size() * static_cast<size_t>(a.rows))
    return AssertionFailure() << "DIA header, offsets or array size are wrong";
  int64_t nonzero_cells = 0, nonzero_entries = 0;
  for (float v : d.values) nonzero_cells += v != 0.0f;
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) {
      const auto k =
          std::lower_bound(offsets.begin(), offsets.end(), a.col_idx[i] - r) - offsets.begin();
      if (d.values[k * a.rows + r] != a.values[i])
        return AssertionFailure() << "entry (" << r << ", " << a.col_idx[i] << ") is wrong";
      nonzero_entries += a.values[i] != 0.0f;
    }
  if (nonzero_cells != nonzero_entries)  // includes the cells outside the matrix
    return AssertionFailure() << nonzero_cells << " nonzero cells for " << nonzero_entries
                              << " nonzero entries";
  return AssertionSuccess();
}

AssertionResult check_hyb(const csr_matrix& a, const hyb_matrix& h, int32_t width) {
  const int32_t ell_width = std::min(width, longest_row(a));
  if (AssertionResult ell = check_ell(a, h.ell, ell_width); !ell) return ell;
  if (h.coo.rows != a.rows || h.coo.cols != a.cols || h.coo.row_idx.size() != h.coo.values.size() ||
      h.coo.col_idx.size() != h.coo.values.size())
    return AssertionFailure() << "HYB COO part has the wrong shape";
  size_t k = 0;  // the rest of each row, in CSR order
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r] + ell_width; i < a.row_ptr[r + 1]; ++i, ++k)
      if (k >= h.coo.values.size() || h.coo.row_idx[k] != r || h.coo.col_idx[k] != a.col_idx[i] ||
          h.coo.values[k] != a.values[i])
        return AssertionFailure() << "HYB COO entry " << k << " is not entry " << i - a.row_ptr[r]
                                  << " of row " << r;
  if (k != h.coo.values.size()) return AssertionFailure() << "HYB COO part has extra entries";
  return AssertionSuccess();
}

// ---------------------------------------------------------------------------------------------
// Every format, every matrix, every parameter choice

// Generous enough for every test matrix except where the padding explodes (checked as refusals).
constexpr int64_t test_limit = int64_t{8} << 20;

TEST(Formats, CooHoldsTheEntriesAndMatchesReference) {
  for (const named_matrix& m : matrices()) {
    SCOPED_TRACE(m.name);
    const coo_matrix coo = to_coo(m.a);
    EXPECT_TRUE(check_coo(m.a, coo));
    EXPECT_TRUE(matches_reference(m, [&](const float* x, float* y) { spmv(coo, x, y); }));
  }
}

TEST(Formats, EllPadsToTheLongestRowOrRefuses) {
  for (const named_matrix& m : matrices()) {
    SCOPED_TRACE(m.name);
    const int64_t elements = int64_t{m.a.rows} * longest_row(m.a);
    if (elements > test_limit) {
      EXPECT_THROW(to_ell(m.a, test_limit), error);
      continue;
    }
    const ell_matrix ell = to_ell(m.a, test_limit);
    EXPECT_TRUE(check_ell(m.a, ell, longest_row(m.a)));
    EXPECT_TRUE(matches_reference(m, [&](const float* x, float* y) { spmv(ell, x, y); }));
  }
}

TEST(Formats, SellSortsWindowsPadsSlicesAndMatchesReference) {
  for (const named_matrix& m : matrices())
    for (int32_t C : {1, 4, 32})
      for (int32_t sigma : {1, C, 256, std::max(m.a.rows, 1)}) {
        SCOPED_TRACE(m.name + ", C = " + std::to_string(C) + ", sigma = " + std::to_string(sigma));
        const sell_matrix s = to_sell(m.a, C, sigma);
        EXPECT_TRUE(check_sell(m.a, s, C, sigma));
        EXPECT_TRUE(matches_reference(m, [&](const float* x, float* y) { spmv(s, x, y); }));
      }
}

TEST(Formats, BsrStoresOnlyNonemptyBlocksAndMatchesReference) {
  for (const named_matrix& m : matrices())
    for (int32_t r : {1, 2, 3, 4, 8})
      for (int32_t c : {1, 2, 3, 4, 8}) {
        SCOPED_TRACE(m.name + ", block " + std::to_string(r) + " x " + std::to_string(c));
        const bsr_matrix b = to_bsr(m.a, r, c);
        EXPECT_TRUE(check_bsr(m.a, b, r, c));
        EXPECT_TRUE(matches_reference(m, [&](const float* x, float* y) { spmv(b, x, y); }));
      }
}

TEST(Formats, DiaStoresEachPresentDiagonalOrRefuses) {
  for (const named_matrix& m : matrices()) {
    SCOPED_TRACE(m.name);
    const int64_t elements = static_cast<int64_t>(csr_offsets(m.a).size()) * m.a.rows;
    if (elements > test_limit) {
      EXPECT_THROW(to_dia(m.a, test_limit), error);
      continue;
    }
    const dia_matrix d = to_dia(m.a, test_limit);
    EXPECT_TRUE(check_dia(m.a, d));
    EXPECT_TRUE(matches_reference(m, [&](const float* x, float* y) { spmv(d, x, y); }));
  }
}

TEST(Formats, HybSplitsEachRowAndMatchesReference) {
  for (const named_matrix& m : matrices())
    for (int32_t width : {0, 1, 3, 100}) {
      SCOPED_TRACE(m.name + ", width " + std::to_string(width));
      const hyb_matrix h = to_hyb(m.a, width);
      EXPECT_TRUE(check_hyb(m.a, h, width));
      EXPECT_TRUE(matches_reference(m, [&](const float* x, float* y) { spmv(h, x, y); }));
    }
}

// CSR16 keeps CSR's row_ptr and values, each row's first column, and 16-bit offsets from it:
// decompressing gives the CSR matrix back, and its SpMV matches the reference.
TEST(Formats, Csr16RoundTripsAndMatchesReference) {
  int built = 0;
  for (const named_matrix& m : matrices()) {
    SCOPED_TRACE(m.name);
    if (max_row_span(m.a) > csr16_matrix::max_col_offset) {
      EXPECT_THROW(to_csr16(m.a), error);
      continue;
    }
    const csr16_matrix c = to_csr16(m.a);
    ++built;
    EXPECT_EQ(c.row_ptr, m.a.row_ptr);
    EXPECT_EQ(c.values, m.a.values);
    ASSERT_EQ(c.col_base.size(), static_cast<size_t>(m.a.rows));
    for (int32_t r = 0; r < m.a.rows; ++r)
      EXPECT_EQ(c.col_base[r], m.a.row_length(r) ? m.a.col_idx[m.a.row_ptr[r]] : 0) << "row " << r;
    expect_round_trip(m, c);
  }
  EXPECT_GT(built, 0);
}

// A row spanning 65536 columns (or more) does not fit a 16-bit offset: refused, naming the row,
// its columns and the limit; 65535 still fits, at the edge.
TEST(Formats, Csr16RefusesRowsWiderThanSixteenBits) {
  const csr_matrix edge = csr_from_triplets(2, 65536, {{1, 0, 1.0f}, {1, 65535, 2.0f}});
  EXPECT_EQ(max_row_span(edge), 65535);
  EXPECT_EQ(to_csr16(edge).col_offset, (std::vector<uint16_t>{0, 65535}));
  const csr_matrix wide =
      csr_from_triplets(4, 200000, {{0, 5, 1.0f}, {0, 9, 1.0f}, {3, 7, 1.0f}, {3, 65543, 1.0f}});
  EXPECT_EQ(max_row_span(wide), 65536);
  try {
    to_csr16(wide);
    FAIL() << "to_csr16 accepted a row spanning 65536 columns";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("row 3 spans columns 7..65543, 65536 apart"));
    EXPECT_THAT(e.what(), HasSubstr("at most 65535"));
  }
  csr16_matrix broken = to_csr16(edge);
  broken.col_base.pop_back();
  EXPECT_THROW(to_csr(broken), error);
  std::vector<float> x(65536, 1.0f), y(2);
  EXPECT_THROW(spmv(broken, x.data(), y.data()), error);
}

// HCOO is COO with the most referenced columns' entries naming a hub slot: resolving the slots
// gives the CSR matrix back, its SpMV matches the reference, and the hubs are the columns with the
// most entries (ties by lower column), only columns with entries, at most `hubs` of them.
TEST(Formats, HcooRoundTripsAndMatchesReference) {
  for (const named_matrix& m : matrices()) {
    SCOPED_TRACE(m.name);
    std::vector<int64_t> count(static_cast<size_t>(m.a.cols), 0);
    for (int32_t c : m.a.col_idx) ++count[c];
    const int64_t used = std::count_if(count.begin(), count.end(), [](int64_t n) { return n > 0; });
    for (int32_t hubs : {0, 1, 7, hub_coo_matrix::max_hubs}) {
      const hub_coo_matrix h = to_hub_coo(m.a, hubs);
      EXPECT_EQ(static_cast<int64_t>(h.hub_cols.size()), std::min<int64_t>(hubs, used));
      for (size_t i = 0; i < h.hub_cols.size(); ++i) {
        EXPECT_GT(count[h.hub_cols[i]], 0);
        if (i == 0) continue;
        const int64_t before = count[h.hub_cols[i - 1]], here = count[h.hub_cols[i]];
        EXPECT_TRUE(before > here || (before == here && h.hub_cols[i - 1] < h.hub_cols[i]))
            << "slot " << i;
      }
      int64_t in_hubs = 0;
      for (int32_t c : h.coo.col_idx) in_hubs += c < 0;
      int64_t want = 0;
      for (int32_t c : h.hub_cols) want += count[c];
      EXPECT_EQ(in_hubs, want);
      expect_round_trip(m, h);
    }
  }
}

// Tables beyond max_hubs (what shared memory holds) or negative are refused; a layout naming a
// slot past its table is refused by to_csr and the SpMV.
TEST(Formats, HcooRefusesTablesOutOfRangeAndSlotsPastTheTable) {
  const csr_matrix a = csr_from_triplets(3, 5, {{0, 1, 1.0f}, {1, 1, 2.0f}, {2, 4, 3.0f}});
  for (int32_t hubs : {-1, hub_coo_matrix::max_hubs + 1}) {
    try {
      to_hub_coo(a, hubs);
      FAIL() << "to_hub_coo accepted hubs = " << hubs;
    } catch (const error& e) {
      EXPECT_THAT(e.what(), HasSubstr("HCOO: hubs must be in [0, 49152]"));
    }
  }
  hub_coo_matrix broken = to_hub_coo(a, 1);
  ASSERT_EQ(broken.hub_cols, (std::vector<int32_t>{1}));
  EXPECT_EQ(broken.coo.col_idx, (std::vector<int32_t>{~0, ~0, 4}));
  broken.coo.col_idx[2] = ~1;  // slot 1 of a one-column table
  EXPECT_THROW(to_csr(broken), error);
  std::vector<float> x(5, 1.0f), y(3);
  EXPECT_THROW(spmv(broken, x.data(), y.data()), error);
}

// RCSR holds B = P A P^T with P the RCM order: row p of B is original row perm[p], columns
// renumbered to positions and ascending. Converting back gives A, and its SpMV (gather, B, scatter)
// matches the reference. Non-square matrices are refused.
TEST(Formats, RcsrRenumbersByRcmRoundTripsAndMatchesReference) {
  int built = 0, refused = 0;
  for (const named_matrix& m : matrices()) {
    SCOPED_TRACE(m.name);
    if (m.a.rows != m.a.cols) {
      EXPECT_THROW(to_rcsr(m.a), error);
      ++refused;
      continue;
    }
    const rcsr_matrix c = to_rcsr(m.a);
    ++built;
    EXPECT_EQ(c.perm, reverse_cuthill_mckee_order(m.a));
    ASSERT_EQ(c.row_ptr.size(), static_cast<size_t>(m.a.rows) + 1);
    ASSERT_EQ(c.nnz(), m.a.nnz());
    for (int32_t p = 0; p < c.rows; ++p) {
      const int32_t old = c.perm[p];
      ASSERT_EQ(c.row_ptr[p + 1] - c.row_ptr[p], m.a.row_length(old)) << "position " << p;
      for (int32_t e = c.row_ptr[p]; e < c.row_ptr[p + 1]; ++e) {
        if (e > c.row_ptr[p]) {
          EXPECT_LT(c.col_idx[e - 1], c.col_idx[e]);
        }
        // B[p][q] = A[perm[p]][perm[q]]
        const int32_t col = c.perm[c.col_idx[e]];
        const auto begin = m.a.col_idx.begin() + m.a.row_ptr[old];
        const auto end = m.a.col_idx.begin() + m.a.row_ptr[old + 1];
        const auto at = std::lower_bound(begin, end, col);
        ASSERT_TRUE(at != end && *at == col) << "B[" << p << "][" << c.col_idx[e] << "]";
        EXPECT_EQ(c.values[e], m.a.values[at - m.a.col_idx.begin()]);
      }
    }
    expect_round_trip(m, c);
  }
  EXPECT_GT(built, 5);  // 0x0, 1x1 (empty and not), 64x64, 2000x2000, 777x777, ...
  EXPECT_GT(refused, 5);
}

// Hubs first: positions by decreasing row length, equal lengths in index order; RCSR with that
// numbering round-trips like the RCM one.
TEST(Formats, HubsFirstOrderSortsByDecreasingDegreeStably) {
  // Row lengths 1, 3, 0, 3, 2: hubs first is 1, 3 (both 3, index order), 4, 0, 2.
  const csr_matrix a = csr_from_triplets(5, 5,
                                         {{0, 0, 1.0f},
                                          {1, 0, 2.0f},
                                          {1, 2, 3.0f},
                                          {1, 4, 4.0f},
                                          {3, 1, 5.0f},
                                          {3, 3, 6.0f},
                                          {3, 4, 7.0f},
                                          {4, 0, 8.0f},
                                          {4, 3, 9.0f}});
  EXPECT_EQ(hubs_first_order(a), (std::vector<int32_t>{1, 3, 4, 0, 2}));
  int built = 0;
  for (const named_matrix& m : matrices()) {
    if (m.a.rows != m.a.cols) continue;
    SCOPED_TRACE(m.name);
    const std::vector<int32_t> order = hubs_first_order(m.a);
    for (size_t p = 1; p < order.size(); ++p) {
      const int32_t before = m.a.row_length(order[p - 1]), here = m.a.row_length(order[p]);
      ASSERT_TRUE(before > here || (before == here && order[p - 1] < order[p])) << "position " << p;
    }
    const rcsr_matrix c = to_rcsr(m.a, order);
    EXPECT_EQ(c.perm, order);
    expect_round_trip(m, c);
    ++built;
  }
  EXPECT_GT(built, 5);
}

TEST(Formats, RcsrRefusesANonSquareMatrixInOneLine) {
  const csr_matrix wide = csr_from_triplets(100, 120, {{0, 119, 1.0f}});
  try {
    to_rcsr(wide);
    FAIL() << "to_rcsr accepted a 100 x 120 matrix";
  } catch (const error& e) {
    EXPECT_EQ(std::string(e.what()),
              "RCSR: the matrix is 100 x 120; a symmetric renumbering needs a square matrix "
              "(use CSR)");
  }
  // Broken layouts are refused, not read out of bounds.
  const csr_matrix square = csr_from_triplets(3, 3, {{0, 2, 1.0f}, {2, 0, 2.0f}, {1, 1, 3.0f}});
  EXPECT_THROW(to_rcsr(square, {0, 1, 1}), error);  // not a permutation
  EXPECT_THROW(to_rcsr(square, {0, 1}), error);
  rcsr_matrix broken = to_rcsr(square);
  broken.perm[0] = broken.perm[1];
  EXPECT_THROW(to_csr(broken), error);
  broken = to_rcsr(square);
  broken.perm.pop_back();
  std::vector<float> x(3, 1.0f), y(3);
  EXPECT_THROW(spmv(broken, x.data(), y.data()), error);
}

// The point of the format: a 2D grid (5-point stencil) numbered at random has a bandwidth near n;
// after RCM it is about one grid side. A given order is applied as it is.
TEST(Formats, RcsrShrinksTheBandwidthOfARandomlyNumberedGrid) {
  const int32_t side = 40, n = side * side;
  std::vector<int32_t> label(static_cast<size_t>(n));
  std::iota(label.begin(), label.end(), 0);
  std::mt19937_64 rng(11);
  std::shuffle(label.begin(), label.end(), rng);
  std::vector<triplet> t;
  for (int32_t i = 0; i < side; ++i)
    for (int32_t j = 0; j < side; ++j) {
      const int32_t v = label[i * side + j];
      t.push_back({v, v, 4.0f});
      if (i > 0) t.push_back({v, label[(i - 1) * side + j], -1.0f});
      if (i + 1 < side) t.push_back({v, label[(i + 1) * side + j], -1.0f});
      if (j > 0) t.push_back({v, label[i * side + j - 1], -1.0f});
      if (j + 1 < side) t.push_back({v, label[i * side + j + 1], -1.0f});
    }
  const csr_matrix a = csr_from_triplets(n, n, t);
  const rcsr_matrix c = to_rcsr(a);
  const csr_matrix b{c.rows, c.cols, c.row_ptr, c.col_idx, c.values};
  EXPECT_GT(matrix_bandwidth(a), n / 2);
  EXPECT_LE(matrix_bandwidth(b), matrix_bandwidth(a));
  EXPECT_LE(matrix_bandwidth(b), 2 * side);
  // The identity order keeps A as it is.
  std::vector<int32_t> identity(static_cast<size_t>(n));
  std::iota(identity.begin(), identity.end(), 0);
  const rcsr_matrix same = to_rcsr(a, identity);
  EXPECT_EQ(same.row_ptr, a.row_ptr);
  EXPECT_EQ(same.col_idx, a.col_idx);
}

// The matrix set must reach both sides of the refusal branches above, or they test nothing.
TEST(Formats, TestMatricesExerciseTheRefusals) {
  int ell_refused = 0, dia_refused = 0, dia_built = 0;
  for (const named_matrix& m : matrices()) {
    ell_refused += int64_t{m.a.rows} * longest_row(m.a) > test_limit;
    const int64_t dia = static_cast<int64_t>(csr_offsets(m.a).size()) * m.a.rows;
    dia_refused += dia > test_limit;
    dia_built += dia <= test_limit && m.a.nnz() > 1000;
  }
  EXPECT_GT(ell_refused, 0);
  EXPECT_GT(dia_refused, 0);
  EXPECT_GT(dia_built, 0);
}

// ---------------------------------------------------------------------------------------------
// Limits and bad parameters

std::string message_of(const std::function<void()>& convert) {
  try {
    convert();
  } catch (const error& e) {
    return e.what();
  }
  return "(no error)";
}

// 10 x 1000 with rows of length 1, except row 3 with 500 entries.
csr_matrix one_long_row() {
  std::vector<triplet> t;
  for (int32_t r = 0; r < 10; ++r) t.push_back({r, r, 1.0f});
  for (int32_t j = 0; j < 500; ++j) t.push_back({3, 100 + j, 2.0f});
  return csr_from_triplets(10, 1000, t);
}

TEST(FormatLimits, EllRefusesBeyondMaxElementsAndSaysHowMuch) {
  const csr_matrix a = one_long_row();
  const int64_t elements = int64_t{a.rows} * longest_row(a);  // 10 rows x width 501
  EXPECT_NO_THROW(to_ell(a, elements));
  const std::string why = message_of([&] { to_ell(a, elements - 1); });
  EXPECT_THAT(why, HasSubstr("ELL"));
  EXPECT_THAT(why, HasSubstr(std::to_string(elements)));
  EXPECT_THAT(why, HasSubstr(std::to_string(elements - 1)));
}

TEST(FormatLimits, SellRefusesBeyondMaxElements) {
  const csr_matrix a = one_long_row();
  // C = 4, sigma = 1: slice 0 (rows 0-3) is 501 wide, slices 1 and 2 are 1 wide; 3 slices x 4
  // lanes.
  const int64_t elements = 4 * 501 + 4 * 1 + 4 * 1;
  EXPECT_EQ(to_sell(a, 4, 1, elements).values.size(), static_cast<size_t>(elements));
  const std::string why = message_of([&] { to_sell(a, 4, 1, elements - 1); });
  EXPECT_THAT(why, HasSubstr("SELL"));
  EXPECT_THAT(why, HasSubstr(std::to_string(elements)));
}

TEST(FormatLimits, BsrRefusesBeyondMaxElements) {
  const csr_matrix a = one_long_row();
  const int64_t elements = to_bsr(a, 2, 2).nnz_blocks() * 4;
  EXPECT_NO_THROW(to_bsr(a, 2, 2, elements));
  const std::string why = message_of([&] { to_bsr(a, 2, 2, elements - 1); });
  EXPECT_THAT(why, HasSubstr("BSR"));
  EXPECT_THAT(why, HasSubstr(std::to_string(elements)));
}

TEST(FormatLimits, DiaRefusalNamesTheDiagonalsAndTheFill) {
  // 10 x 10 tridiagonal: 3 diagonals x 10 rows = 30 cells for 28 nonzeros (fill 1.07).
  std::vector<triplet> t;
  for (int32_t r = 0; r < 10; ++r)
    for (int32_t c = std::max(0, r - 1); c <= std::min(9, r + 1); ++c) t.push_back({r, c, 1.0f});
  const csr_matrix a = csr_from_triplets(10, 10, t);
  ASSERT_EQ(a.nnz(), 28);
  EXPECT_EQ(to_dia(a, 30).num_diags, 3);
  const std::string why = message_of([&] { to_dia(a, 29); });
  EXPECT_THAT(why, HasSubstr("3 diagonals"));
  EXPECT_THAT(why, HasSubstr("fill 1.07"));
  EXPECT_THAT(why, HasSubstr("30"));
}

TEST(FormatLimits, HybRefusesAWideEllPart) {
  const csr_matrix a = one_long_row();
  EXPECT_NO_THROW(to_hyb(a, 50, 10 * 50));
  EXPECT_THAT(message_of([&] { to_hyb(a, 50, 10 * 50 - 1); }), HasSubstr("500"));
}

TEST(FormatLimits, ThirtyTwoBitIndexLimitHoldsWithoutAllocating) {
  // 100000 rows x width 30000 = 3e9 ELL slots: beyond int indexing, refused before allocation.
  std::vector<triplet> t;
  for (int32_t j = 0; j < 30000; ++j) t.push_back({0, j, 1.0f});
  const csr_matrix a = csr_from_triplets(100000, 30000, t);
  EXPECT_THAT(message_of([&] { to_ell(a, std::numeric_limits<int64_t>::max()); }),
              HasSubstr("32-bit"));
  EXPECT_THAT(message_of([&] { to_dia(a, std::numeric_limits<int64_t>::max()); }),
              HasSubstr("32-bit"));
}

TEST(FormatParams, BadParametersAreRefused) {
  const csr_matrix a = one_long_row();
  for (int32_t C : {0, -4, 3, 48, 2048})
    EXPECT_THAT(message_of([&] { to_sell(a, C, 1); }), HasSubstr("power of two")) << C;
  EXPECT_NO_THROW(to_sell(a, 1024, 1));
  for (int32_t sigma : {0, -1})
    EXPECT_THAT(message_of([&] { to_sell(a, 4, sigma); }), HasSubstr("sigma"));
  for (auto [r, c] :
       std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 0}, {65, 1}, {1, 65}, {-2, 2}})
    EXPECT_THAT(message_of([&] { to_bsr(a, r, c); }), HasSubstr("[1, 64]"));
  EXPECT_NO_THROW(to_bsr(a, 64, 64));
  EXPECT_THAT(message_of([&] { to_hyb(a, -1); }), HasSubstr("width"));
}

TEST(FormatParams, ConversionsRejectAnInvalidCsr) {
  csr_matrix bad = one_long_row();
  std::swap(bad.col_idx[bad.row_ptr[3]], bad.col_idx[bad.row_ptr[3] + 1]);
  EXPECT_THROW(to_coo(bad), error);
  EXPECT_THROW(to_ell(bad), error);
  EXPECT_THROW(to_sell(bad, 4, 4), error);
  EXPECT_THROW(to_bsr(bad, 2, 2), error);
  EXPECT_THROW(to_dia(bad), error);
  EXPECT_THROW(to_hyb(bad, 2), error);
}

TEST(FormatParams, SpmvRejectsInconsistentLayouts) {
  const csr_matrix a = one_long_row();
  std::vector<float> x(static_cast<size_t>(a.cols), 1.0f), y(static_cast<size_t>(a.rows));
  coo_matrix coo = to_coo(a);
  std::swap(coo.row_idx.front(), coo.row_idx.back());
  EXPECT_THROW(spmv(coo, x.data(), y.data()), error);
  ell_matrix ell = to_ell(a);
  ell.values.pop_back();
  EXPECT_THROW(spmv(ell, x.data(), y.data()), error);
  sell_matrix sell = to_sell(a, 4, 1);
  sell.slice_width[0] += 1;
  EXPECT_THROW(spmv(sell, x.data(), y.data()), error);
  bsr_matrix bsr = to_bsr(a, 2, 2);
  bsr.r = 3;
  EXPECT_THROW(spmv(bsr, x.data(), y.data()), error);
  dia_matrix dia = to_dia(a);
  dia.offsets.pop_back();
  EXPECT_THROW(spmv(dia, x.data(), y.data()), error);
  hyb_matrix hyb = to_hyb(a, 1);
  hyb.coo.rows = 11;
  EXPECT_THROW(spmv(hyb, x.data(), y.data()), error);
}

// ---------------------------------------------------------------------------------------------
// Details of single layouts

TEST(FormatDetails, ExplicitZerosStayStructure) {
  const csr_matrix a = csr_from_triplets(3, 4, {{0, 3, 0.0f}, {1, 1, 5.0f}, {2, 0, 0.0f}});
  EXPECT_EQ(to_coo(a).nnz(), 3);
  EXPECT_EQ(to_ell(a).width, 1);
  EXPECT_EQ(to_dia(a).offsets, (std::vector<int32_t>{-2, 0, 3}));
  EXPECT_EQ(to_bsr(a, 1, 1).nnz_blocks(), 3);
  EXPECT_EQ(to_hyb(a, 0).coo.nnz(), 3);
}

TEST(FormatDetails, SellSigmaOneKeepsTheOrderAndFullSigmaSortsAll) {
  const csr_matrix a = random_matrix(300, 300, 6.0, true, 42);
  std::vector<int32_t> identity(300);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(to_sell(a, 32, 1).perm, identity);
  const sell_matrix all = to_sell(a, 32, 300);
  for (int32_t i = 1; i < 300; ++i)
    EXPECT_GE(a.row_length(all.perm[i - 1]), a.row_length(all.perm[i]));
  // Sorting shrinks the padding: never more elements than the unsorted slices.
  EXPECT_LE(all.values.size(), to_sell(a, 32, 1).values.size());
}

TEST(FormatDetails, LastSliceLanesPastTheRowsArePadding) {
  const csr_matrix a = random_matrix(5, 9, 4.0, false, 3);  // one slice of 32 lanes, 5 rows
  const sell_matrix s = to_sell(a, 32, 1);
  ASSERT_EQ(s.num_slices, 1);
  for (int32_t j = 0; j < s.slice_width[0]; ++j)
    for (int32_t l = 5; l < 32; ++l) {
      EXPECT_EQ(s.col_idx[j * 32 + l], -1);
      EXPECT_EQ(s.values[j * 32 + l], 0.0f);
    }
}

}  // namespace
}  // namespace sparserl
