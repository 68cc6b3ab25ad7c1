// Chung-Lu power-law graphs (social networks, web crawls, citation graphs): node i gets weight
// (i + i0)^(-1/(exponent-1)), scaled so the weights sum to rows * avg_degree, and about
// rows * avg_degree / 2 edges join endpoints drawn in proportion to weight; the pattern is the
// symmetric adjacency without self loops. Natural order puts the hubs first (ids by degree);
// random order is the shuffled-id case real graph datasets often come in.
#include <algorithm>
#include <cmath>

#include "sparse/generators_detail.h"

namespace sparserl::gen {

csr_matrix generate_powerlaw(const generator_spec& spec) {
  require_square(spec);
  const int64_t n = spec.rows;
  if (!(spec.exponent > 2.0 && spec.exponent <= 10.0))
    fail(spec, "exponent must be in (2, 10], got " + std::to_string(spec.exponent));
  if (!(spec.avg_degree >= 1.0 && spec.avg_degree < static_cast<double>(n)))
    fail(spec, "avg_degree must be in [1, rows), got " + std::to_string(spec.avg_degree));
  check_nnz_estimate(spec.family, static_cast<double>(n) * spec.avg_degree);
  const double beta = 1.0 / (spec.exponent - 1.0);
  // i0 caps the largest expected degree near sqrt(n * avg) (the usual Chung-Lu condition).
  const double max_degree = std::sqrt(static_cast<double>(n) * spec.avg_degree);
  std::vector<double> cumulative(static_cast<size_t>(n) + 1, 0.0);
  for (int64_t i = 0; i < n; ++i)
    cumulative[i + 1] = cumulative[i] + std::pow(double(i + 1), -beta);
  const double mean_weight = cumulative[n] / static_cast<double>(n);
  const double i0 =
      std::max(0.0, std::pow(max_degree * mean_weight / spec.avg_degree, -1.0 / beta) - 1.0);
  for (int64_t i = 0; i < n; ++i)
    cumulative[i + 1] = cumulative[i] + std::pow(double(i) + 1 + i0, -beta);
  const int64_t edges =
      static_cast<int64_t>(std::llround(static_cast<double>(n) * spec.avg_degree / 2));
  // Endpoints per fixed chunk of edges (thread-count independent), then both directions.
  constexpr int64_t chunk = 1 << 16;
  const int64_t chunks = (edges + chunk - 1) / chunk;
  std::vector<int32_t> src(static_cast<size_t>(edges)), dst(static_cast<size_t>(edges));
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    rng g(spec.seed, static_cast<uint64_t>(c));
    auto draw = [&] {
      const double u = g.uniform() * cumulative[n];
      const auto it = std::upper_bound(cumulative.begin() + 1, cumulative.end(), u);
      return static_cast<int32_t>(std::min<int64_t>(n - 1, it - cumulative.begin() - 1));
    };
    for (int64_t e = c * chunk; e < std::min(edges, (c + 1) * chunk); ++e)
      src[e] = draw(), dst[e] = draw();
  }
  std::vector<int64_t> ptr(static_cast<size_t>(n) + 1, 0);
  for (int64_t e = 0; e < edges; ++e)
    if (src[e] != dst[e]) ++ptr[src[e] + 1], ++ptr[dst[e] + 1];
  for (int64_t i = 0; i < n; ++i) ptr[i + 1] += ptr[i];
  std::vector<int32_t> adj(static_cast<size_t>(ptr[n]));
  {
    std::vector<int64_t> next(ptr.begin(), ptr.end() - 1);
    for (int64_t e = 0; e < edges; ++e)
      if (src[e] != dst[e]) adj[next[src[e]]++] = dst[e], adj[next[dst[e]]++] = src[e];
  }
  std::vector<int32_t>().swap(src);
  std::vector<int32_t>().swap(dst);
  const csr_matrix pattern =
      build_pattern(static_cast<int32_t>(n), [&](int32_t i, std::vector<int32_t>& out) {
        out.insert(out.end(), adj.begin() + ptr[i], adj.begin() + ptr[i + 1]);
      });
  return finish_graph(spec, pattern, 1);
}

}  // namespace sparserl::gen
