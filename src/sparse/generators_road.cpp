// Road-like planar graphs (road networks, power grids): a square lattice keeping each street
// segment with probability 0.7, so the mean degree is about 2.8 (road networks: 2.5-3), the
// graph is planar and its diameter grows like sqrt(rows). Rows carry the diagonal (a graph
// Laplacian), so about 3.8 entries per row.
#include <cmath>

#include "sparse/generators_detail.h"

namespace sparserl::gen {

csr_matrix generate_road(const generator_spec& spec) {
  require_square(spec);
  const int64_t n = static_cast<int64_t>(std::round(std::sqrt(static_cast<double>(spec.rows))));
  if (n < 2) fail(spec, "rows must be >= 4 (a 2 x 2 lattice)");
  check_nnz_estimate(spec.family, 5.0 * n * n);
  constexpr uint64_t keep_threshold = static_cast<uint64_t>(0.7 * 18446744073709551616.0);
  // One coin per lattice edge, identified by its lower node and direction: both ends agree.
  auto kept = [&](int64_t node, uint64_t direction) {
    uint64_t state =
        spec.seed ^ ((static_cast<uint64_t>(node) * 2 + direction) * 0xd1b54a32d192ed03ULL);
    splitmix64(state);
    return splitmix64(state) < keep_threshold;
  };
  const csr_matrix pattern =
      build_pattern(static_cast<int32_t>(n * n), [&](int32_t node, std::vector<int32_t>& out) {
        const int64_t i = node / n, j = node % n;
        out.push_back(node);
        if (i > 0 && kept(node - n, 0)) out.push_back(static_cast<int32_t>(node - n));
        if (i + 1 < n && kept(node, 0)) out.push_back(static_cast<int32_t>(node + n));
        if (j > 0 && kept(node - 1, 1)) out.push_back(node - 1);
        if (j + 1 < n && kept(node, 1)) out.push_back(node + 1);
      });
  return finish_graph(spec, pattern, 1);
}

}  // namespace sparserl::gen
