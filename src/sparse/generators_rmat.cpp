// R-MAT (recursive matrix, a stochastic Kronecker graph): each edge descends log2(n) levels,
// picking a quadrant with probabilities a, b, c, d; the result has power-law row lengths.
#include <algorithm>
#include <atomic>
#include <cmath>

#include "sparse/generators_detail.h"

namespace sparserl::gen {

namespace {

constexpr int64_t edges_per_chunk = int64_t{1} << 16;
constexpr int max_attempts = 1000;  // per edge, for edges that fall outside a non-power-of-2 n

struct quadrant_thresholds {
  uint32_t a, ab, abc;  // cumulative probabilities scaled to 16 bits
};

// One edge in [0, 2^scale)^2. 16 random bits per level, four levels per 64-bit draw.
triplet draw_edge(rng& g, int scale, const quadrant_thresholds& t) {
  int64_t row = 0, col = 0;
  uint64_t bits = 0;
  for (int level = 0; level < scale; ++level) {
    if (level % 4 == 0) bits = g.next();
    const uint32_t u = static_cast<uint32_t>(bits & 0xffff);
    bits >>= 16;
    // Quadrants a, b, c, d = (0,0), (0,1), (1,0), (1,1); the xor form keeps it branch-free.
    const int64_t row_bit = u >= t.ab, col_bit = (u >= t.a) ^ (u >= t.ab) ^ (u >= t.abc);
    row = row * 2 + row_bit;
    col = col * 2 + col_bit;
  }
  return {static_cast<int32_t>(row), static_cast<int32_t>(col), 0.0f};
}

void validate(const generator_spec& s) {
  require_square(s);
  const bool in_range = s.rmat_a >= 0 && s.rmat_b >= 0 && s.rmat_c >= 0 &&
                        s.rmat_a + s.rmat_b + s.rmat_c <= 1 + 1e-12;
  if (!in_range)
    fail(s, "rmat_a, rmat_b, rmat_c must be >= 0 with a + b + c <= 1 (d = 1 - a - b - c), got " +
                std::to_string(s.rmat_a) + ", " + std::to_string(s.rmat_b) + ", " +
                std::to_string(s.rmat_c));
  if (!(s.avg_degree > 0)) fail(s, "avg_degree must be > 0, got " + std::to_string(s.avg_degree));
  check_nnz_estimate(s.family, s.avg_degree * s.rows);
}

}  // namespace

csr_matrix generate_rmat(const generator_spec& spec) {
  validate(spec);
  const int64_t n = spec.rows;
  int scale = 0;
  while ((int64_t{1} << scale) < n) ++scale;
  const auto scaled = [](double p) { return static_cast<uint32_t>(std::llround(p * 65536)); };
  const quadrant_thresholds t{scaled(spec.rmat_a), scaled(spec.rmat_a + spec.rmat_b),
                              scaled(spec.rmat_a + spec.rmat_b + spec.rmat_c)};
  const int64_t edges = std::max<int64_t>(1, std::llround(spec.avg_degree * n));
  const int64_t chunks = (edges + edges_per_chunk - 1) / edges_per_chunk;
  std::vector<triplet> entries(static_cast<size_t>(edges));
  std::atomic<bool> stuck{false};
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    rng g(spec.seed, static_cast<uint64_t>(c));
    const int64_t end = std::min(edges, (c + 1) * edges_per_chunk);
    for (int64_t e = c * edges_per_chunk; e < end && !stuck; ++e) {
      int attempt = 0;
      do entries[e] = draw_edge(g, scale, t);
      while ((entries[e].row >= n || entries[e].col >= n) && ++attempt < max_attempts);
      if (attempt == max_attempts) stuck = true;
    }
  }
  if (stuck)
    fail(spec, "the quadrant probabilities put almost no edges inside the " + std::to_string(n) +
                   " x " + std::to_string(n) + " matrix (it is padded to 2^" +
                   std::to_string(scale) + "); raise rmat_a");
  // Duplicate edges merge into one nonzero; values are drawn afterwards, per row, so merging
  // never sums two random values into a near-zero one.
  csr_matrix m = csr_from_triplets(spec.rows, spec.rows, std::move(entries));
#pragma omp parallel for schedule(dynamic, 1024)
  for (int32_t r = 0; r < m.rows; ++r) {
    rng g(spec.seed, value_stream_offset + static_cast<uint64_t>(r));
    for (int32_t i = m.row_ptr[r]; i < m.row_ptr[r + 1]; ++i) m.values[i] = random_value(g);
  }
  return m;
}

}  // namespace sparserl::gen
