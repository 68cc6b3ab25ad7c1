#include "sparse/csr_matrix.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"

namespace sparserl {

namespace {

void check_triplet_bounds(int32_t rows, int32_t cols, const std::vector<triplet>& entries) {
  for (size_t i = 0; i < entries.size(); ++i) {
    const triplet& t = entries[i];
    if (t.row < 0 || t.row >= rows || t.col < 0 || t.col >= cols)
      throw error("entry " + std::to_string(i) + " at (" + std::to_string(t.row) + ", " +
                  std::to_string(t.col) + ") is outside the " + std::to_string(rows) + " x " +
                  std::to_string(cols) + " matrix");
  }
}

// Sorts each row's columns and sums duplicates in place, compacting col_idx / values.
void sort_and_merge_rows(csr_matrix& m) {
  std::vector<std::pair<int32_t, float>> row;
  int32_t out = 0;
  for (int32_t r = 0; r < m.rows; ++r) {
    const int32_t begin = m.row_ptr[r], end = m.row_ptr[r + 1];
    m.row_ptr[r] = out;
    // Rows already strictly ascending (any input sorted by row or by column, as most files
    // are) only need compacting: skip the copy-out and sort.
    const auto cols = m.col_idx.begin();
    if (std::adjacent_find(cols + begin, cols + end, std::greater_equal<>()) == cols + end) {
      if (out != begin) {
        std::copy(cols + begin, cols + end, cols + out);
        std::copy(m.values.begin() + begin, m.values.begin() + end, m.values.begin() + out);
      }
      out += end - begin;
      continue;
    }
    row.clear();
    for (int32_t i = begin; i < end; ++i) row.emplace_back(m.col_idx[i], m.values[i]);
    std::sort(row.begin(), row.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0 && row[i].first == row[i - 1].first) {
        m.values[out - 1] += row[i].second;
        continue;
      }
      m.col_idx[out] = row[i].first;
      m.values[out] = row[i].second;
      ++out;
    }
  }
  m.row_ptr[m.rows] = out;
  m.col_idx.resize(out);
  m.values.resize(out);
}

}  // namespace

csr_matrix csr_from_triplets(int32_t rows, int32_t cols, std::vector<triplet> entries) {
  if (rows < 0 || cols < 0) throw error("matrix dimensions must be non-negative");
  if (entries.size() > static_cast<size_t>(INT32_MAX))
    throw error("more than 2^31-1 nonzeros: the 32-bit kernel ABI cannot index them");
  check_triplet_bounds(rows, cols, entries);
  csr_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  for (const triplet& t : entries) ++m.row_ptr[t.row + 1];
  std::partial_sum(m.row_ptr.begin(), m.row_ptr.end(), m.row_ptr.begin());
  m.col_idx.resize(entries.size());
  m.values.resize(entries.size());
  std::vector<int32_t> next(m.row_ptr.begin(), m.row_ptr.end() - 1);
  for (const triplet& t : entries) {  // counting sort by row: O(nnz)
    const int32_t at = next[t.row]++;
    m.col_idx[at] = t.col;
    m.values[at] = t.value;
  }
  entries.clear();
  entries.shrink_to_fit();
  sort_and_merge_rows(m);
  return m;
}

void validate_csr(const csr_matrix& m) {
  auto fail = [](const std::string& why) { throw error("invalid CSR matrix: " + why); };
  if (m.rows < 0 || m.cols < 0) fail("negative dimensions");
  if (m.row_ptr.size() != static_cast<size_t>(m.rows) + 1) fail("row_ptr has wrong length");
  if (m.row_ptr[0] != 0) fail("row_ptr[0] != 0");
  if (m.col_idx.size() != m.values.size()) fail("col_idx and values differ in length");
  if (static_cast<size_t>(m.row_ptr[m.rows]) != m.col_idx.size()) fail("row_ptr[rows] != nnz");
  // Monotone first: with row_ptr[0] == 0 and row_ptr[rows] == nnz that keeps the column scan
  // below inside col_idx even when a middle row_ptr entry is corrupt.
  for (int32_t r = 0; r < m.rows; ++r)
    if (m.row_ptr[r + 1] < m.row_ptr[r]) fail("row_ptr decreases at row " + std::to_string(r));
  for (int32_t r = 0; r < m.rows; ++r) {
    for (int32_t i = m.row_ptr[r]; i < m.row_ptr[r + 1]; ++i) {
      if (m.col_idx[i] < 0 || m.col_idx[i] >= m.cols)
        fail("column out of range in row " + std::to_string(r));
      if (i > m.row_ptr[r] && m.col_idx[i] <= m.col_idx[i - 1])
        fail("columns not strictly ascending in row " + std::to_string(r));
    }
  }
}

void spmv_reference(const csr_matrix& m, const float* x, float* y) {
#pragma omp parallel for schedule(dynamic, 1024)
  for (int32_t r = 0; r < m.rows; ++r) {
    double sum = 0;
    for (int32_t i = m.row_ptr[r]; i < m.row_ptr[r + 1]; ++i)
      sum += static_cast<double>(m.values[i]) * static_cast<double>(x[m.col_idx[i]]);
    y[r] = static_cast<float>(sum);
  }
}

void spmm_reference(const csr_matrix& m, const float* b, int32_t k, float* c) {
#pragma omp parallel
  {
    std::vector<double> acc(static_cast<size_t>(k));
#pragma omp for schedule(dynamic, 256)
    for (int32_t r = 0; r < m.rows; ++r) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int32_t i = m.row_ptr[r]; i < m.row_ptr[r + 1]; ++i) {
        const double v = m.values[i];
        const float* brow = b + static_cast<int64_t>(m.col_idx[i]) * k;
        for (int32_t j = 0; j < k; ++j) acc[j] += v * static_cast<double>(brow[j]);
      }
      float* crow = c + static_cast<int64_t>(r) * k;
      for (int32_t j = 0; j < k; ++j) crow[j] = static_cast<float>(acc[j]);
    }
  }
}

int32_t max_row_length(const csr_matrix& a) {
  int32_t width = 0;
#pragma omp parallel for reduction(max : width) if (detail::parallel_worth(a.rows))
  for (int32_t r = 0; r < a.rows; ++r) width = std::max(width, a.row_length(r));
  return width;
}

diagonal_distance distance_from_diagonal(const csr_matrix& a) {
  int64_t largest = 0;
  double sum = 0;
#pragma omp parallel for reduction(max : largest) reduction(+ : sum) if (detail::parallel_worth(a.rows))
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      const int64_t d = std::abs(int64_t{a.col_idx[p]} - r);
      largest = std::max(largest, d);
      sum += static_cast<double>(d);
    }
  return {largest, a.nnz() > 0 ? sum / static_cast<double>(a.nnz()) : 0.0};
}

}  // namespace sparserl
