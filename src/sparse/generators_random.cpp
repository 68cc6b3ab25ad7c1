// Unstructured families built row by row: random bands, uniform random, circuit-like (sparse
// base plus a few dense rows and columns) and LP-like rectangular constraint matrices.
#include <algorithm>
#include <cmath>

#include "sparse/generators_detail.h"

namespace sparserl::gen {

namespace {

void require_avg_degree(const generator_spec& spec) {
  if (!(spec.avg_degree >= 1 && spec.avg_degree <= INT32_MAX))
    fail(spec, "avg_degree must be in [1, 2^31-1], got " + std::to_string(spec.avg_degree));
}

void require_density(const generator_spec& spec) {
  if (!(spec.density > 0 && spec.density <= 1))
    fail(spec, "density must be in (0, 1], got " + std::to_string(spec.density));
}

// Row length uniform in [1, 2 * mean - 1], so its mean is `mean`.
int64_t short_row_length(rng& g, double mean) {
  return g.between(1, std::max<int64_t>(1, std::llround(2 * mean - 1)));
}

// `count` distinct rows of [0, rows), ascending, from the matrix-wide stream.
std::vector<int32_t> special_rows(const generator_spec& spec, int64_t count) {
  rng g(spec.seed, global_stream);
  std::vector<int32_t> picked;
  sample_distinct(g, 0, spec.rows, count, picked);
  return picked;
}

bool contains(const std::vector<int32_t>& sorted, int32_t row) {
  return std::binary_search(sorted.begin(), sorted.end(), row);
}

}  // namespace

// Each row holds a uniform number (>= 1) of distinct columns inside [row - bw, row + bw].
csr_matrix generate_banded(const generator_spec& spec) {
  if (spec.bandwidth < 0)
    fail(spec, "bandwidth must be >= 0, got " + std::to_string(spec.bandwidth));
  const int32_t cols = spec.cols == 0 ? spec.rows : spec.cols;
  check_nnz_estimate(spec.family,
                     spec.rows * (std::min<double>(cols, 2.0 * spec.bandwidth + 1) + 1) / 2);
  const generator_spec s = spec;
  return build_rows(s.rows, cols,
                    [s, cols](int32_t row, std::vector<int32_t>& out, std::vector<float>& values) {
                      rng g(s.seed, static_cast<uint64_t>(row));
                      const int64_t lo = std::max<int64_t>(0, int64_t{row} - s.bandwidth);
                      const int64_t hi = std::min<int64_t>(cols, int64_t{row} + s.bandwidth + 1);
                      if (lo >= hi) return;  // a wide matrix's band can miss a row entirely
                      const size_t start = out.size();
                      sample_distinct(g, lo, hi, g.between(1, hi - lo), out);
                      append_random_values(g, out.size() - start, values);
                    });
}

// Every cell is a nonzero with probability `density`, independently.
csr_matrix generate_random(const generator_spec& spec) {
  require_density(spec);
  const int32_t cols = spec.cols == 0 ? spec.rows : spec.cols;
  check_nnz_estimate(spec.family, spec.density * spec.rows * cols);
  const generator_spec s = spec;
  return build_rows(s.rows, cols,
                    [s, cols](int32_t row, std::vector<int32_t>& out, std::vector<float>& values) {
                      rng g(s.seed, static_cast<uint64_t>(row));
                      const size_t start = out.size();
                      sample_bernoulli(g, 0, cols, s.density, out);
                      append_random_values(g, out.size() - start, values);
                    });
}

// Circuit-like: a diagonal plus about avg_degree - 1 couplings per row, mostly to nearby nodes,
// and `dense_rows` nodes (power / ground nets) whose rows and columns are dense.
csr_matrix generate_circuit(const generator_spec& spec) {
  require_square(spec);
  require_avg_degree(spec);
  if (spec.dense_rows < 0 || spec.dense_rows > spec.rows)
    fail(spec, "dense_rows must be in [0, rows=" + std::to_string(spec.rows) + "], got " +
                   std::to_string(spec.dense_rows));
  const int32_t n = spec.rows;
  // Dense lines cover a fifth of the matrix, or all of it when that is still short.
  const double dense_fill = std::max(0.2, std::min(1.0, 8 * spec.avg_degree / n));
  check_nnz_estimate(spec.family, n * spec.avg_degree + 2.0 * spec.dense_rows * dense_fill * n);
  const generator_spec s = spec;
  const std::vector<int32_t> dense = special_rows(spec, spec.dense_rows);
  return build_rows(
      n, n,
      [s, n, dense_fill, dense](int32_t row, std::vector<int32_t>& out,
                                std::vector<float>& values) {
        rng g(s.seed, static_cast<uint64_t>(row));
        const size_t start = out.size();
        out.push_back(row);
        const int64_t couplings = short_row_length(g, s.avg_degree) - 1;
        for (int64_t k = 0; k < couplings; ++k) {
          const bool local = g.below(4) != 0;  // 3 in 4 couplings stay within +-32 nodes
          const int64_t col = local ? std::clamp<int64_t>(row + g.between(-32, 32), 0, n - 1)
                                    : static_cast<int64_t>(g.below(static_cast<uint64_t>(n)));
          out.push_back(static_cast<int32_t>(col));
        }
        for (int32_t d : dense)
          if (g.uniform() < dense_fill) out.push_back(d);
        if (contains(dense, row)) sample_bernoulli(g, 0, n, dense_fill, out);
        sort_unique_tail(out, start);
        append_random_values(g, out.size() - start, values);
      });
}

// LP-like constraint matrix: cols = 2..5 x rows unless given; short rows of about avg_degree
// entries, half near a staircase diagonal (block-angular structure) and half anywhere; and
// about sqrt(rows) / 4 (at least 1) long rows of max(10 * avg_degree, density * cols) entries.
csr_matrix generate_lp(const generator_spec& spec) {
  require_avg_degree(spec);
  require_density(spec);
  int64_t cols = spec.cols;
  if (cols == 0) {
    rng g(spec.seed, global_stream - 1);
    cols = std::llround(spec.rows * (2 + 3 * g.uniform()));
    if (cols > INT32_MAX) fail(spec, "rows too large for cols = 2..5 x rows; give cols");
  }
  const int64_t long_length = std::min<int64_t>(
      cols, std::llround(std::max(10 * spec.avg_degree, spec.density * static_cast<double>(cols))));
  const int64_t long_count = std::max<int64_t>(1, std::llround(std::sqrt(double(spec.rows)) / 4));
  check_nnz_estimate(spec.family, spec.rows * spec.avg_degree + double(long_count) * long_length);
  const generator_spec s = spec;
  const std::vector<int32_t> long_rows = special_rows(spec, long_count);
  return build_rows(s.rows, static_cast<int32_t>(cols),
                    [s, cols, long_length, long_rows](int32_t row, std::vector<int32_t>& out,
                                                      std::vector<float>& values) {
                      rng g(s.seed, static_cast<uint64_t>(row));
                      const size_t start = out.size();
                      if (contains(long_rows, row)) {
                        sample_distinct(g, 0, cols, long_length, out);
                      } else {
                        const int64_t length = std::min(cols, short_row_length(g, s.avg_degree));
                        const int64_t centre = int64_t{row} * cols / s.rows;
                        const int64_t reach = std::llround(2 * s.avg_degree);
                        const int64_t lo = std::max<int64_t>(0, centre - reach),
                                      hi = std::min(cols, centre + reach + 1);
                        sample_distinct(g, lo, hi, length / 2, out);
                        sample_distinct(g, 0, cols, length - length / 2, out);
                        sort_unique_tail(out, start);
                      }
                      append_random_values(g, out.size() - start, values);
                    });
}

}  // namespace sparserl::gen
