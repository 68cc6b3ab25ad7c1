// Sampling helpers and the parallel row builder shared by the generator families.
#include <algorithm>
#include <cmath>

#include "sparse/generators_detail.h"

namespace sparserl::gen {

void sort_unique_tail(std::vector<int32_t>& out, size_t start) {
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
  out.erase(std::unique(out.begin() + static_cast<std::ptrdiff_t>(start), out.end()), out.end());
}

void sample_distinct(rng& g, int64_t lo, int64_t hi, int64_t k, std::vector<int32_t>& out) {
  const int64_t n = hi - lo;
  k = std::min(k, n);
  if (k <= 0) return;
  if (k * 4 >= n) {
    // Selection sampling (Knuth's algorithm S): O(n), already ascending; right when k ~ n.
    int64_t needed = k;
    for (int64_t i = lo; i < hi && needed > 0; ++i) {
      if (static_cast<int64_t>(g.below(static_cast<uint64_t>(hi - i))) < needed) {
        out.push_back(static_cast<int32_t>(i));
        --needed;
      }
    }
    return;
  }
  // Sparse case: draw, sort, drop repeats, top up; repeats are rare since k < n / 4.
  const size_t start = out.size();
  while (static_cast<int64_t>(out.size() - start) < k) {
    const int64_t missing = k - static_cast<int64_t>(out.size() - start);
    for (int64_t i = 0; i < missing; ++i)
      out.push_back(static_cast<int32_t>(lo + static_cast<int64_t>(g.below(n))));
    sort_unique_tail(out, start);
  }
}

void sample_bernoulli(rng& g, int64_t lo, int64_t hi, double p, std::vector<int32_t>& out) {
  if (p <= 0 || lo >= hi) return;
  if (p >= 1) {
    for (int64_t i = lo; i < hi; ++i) out.push_back(static_cast<int32_t>(i));
    return;
  }
  // Geometric gaps between successes: O(selected) draws instead of one per position.
  const double log_q = std::log1p(-p);
  double position = static_cast<double>(lo);
  for (;;) {
    position += std::floor(std::log1p(-g.uniform()) / log_q);
    if (position >= static_cast<double>(hi)) return;
    out.push_back(static_cast<int32_t>(position));
    position += 1;
  }
}

csr_matrix build_rows(int32_t rows, int32_t cols, const row_filler& fill) {
  // Fixed chunks (not per thread) so the output does not depend on the thread count.
  constexpr int32_t chunk_rows = 2048;
  const int64_t chunks = (int64_t{rows} + chunk_rows - 1) / chunk_rows;
  std::vector<std::vector<int32_t>> chunk_cols(static_cast<size_t>(chunks));
  std::vector<std::vector<float>> chunk_values(static_cast<size_t>(chunks));
  csr_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int32_t begin = static_cast<int32_t>(c * chunk_rows);
    const int32_t end = static_cast<int32_t>(std::min<int64_t>(rows, begin + int64_t{chunk_rows}));
    for (int32_t r = begin; r < end; ++r) {
      fill(r, chunk_cols[c], chunk_values[c]);
      m.row_ptr[r + 1] = static_cast<int32_t>(chunk_cols[c].size());  // chunk-local for now
    }
  }
  std::vector<int64_t> chunk_base(static_cast<size_t>(chunks) + 1, 0);
  for (int64_t c = 0; c < chunks; ++c)
    chunk_base[c + 1] = chunk_base[c] + static_cast<int64_t>(chunk_cols[c].size());
  if (chunk_base[chunks] > INT32_MAX)
    throw error("generated matrix has " + std::to_string(chunk_base[chunks]) +
                " nonzeros: more than the 32-bit ABI's 2^31-1");
  m.col_idx.resize(static_cast<size_t>(chunk_base[chunks]));
  m.values.resize(m.col_idx.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int32_t begin = static_cast<int32_t>(c * chunk_rows);
    const int32_t end = static_cast<int32_t>(std::min<int64_t>(rows, begin + int64_t{chunk_rows}));
    for (int32_t r = begin; r < end; ++r) m.row_ptr[r + 1] += static_cast<int32_t>(chunk_base[c]);
    std::copy(chunk_cols[c].begin(), chunk_cols[c].end(), m.col_idx.begin() + chunk_base[c]);
    std::copy(chunk_values[c].begin(), chunk_values[c].end(), m.values.begin() + chunk_base[c]);
    std::vector<int32_t>().swap(chunk_cols[c]);  // free as we go: peak stays at two copies
    std::vector<float>().swap(chunk_values[c]);
  }
  return m;
}

}  // namespace sparserl::gen
