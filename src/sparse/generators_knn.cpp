// k-nearest-neighbour graphs of uniform random points in the unit square or cube (point-cloud
// processing, manifold learning, graph neural networks): row i holds the k points nearest to
// point i, so every row has exactly k entries and the pattern is not symmetric. Natural order
// numbers the points by grid bucket (spatially coherent, as a code that bins its points has).
// knn_sym is its symmetric closure (i ~ j when either is among the other's k nearest: the graph
// spectral clustering and point-cloud Laplacians use), whose rows hold k..~2k entries.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "sparse/generators_detail.h"

namespace sparserl::gen {

namespace {

// The k-nearest-neighbour node pattern in natural (bucket) order.
csr_matrix knn_pattern(const generator_spec& spec) {
  require_square(spec);
  const int dims = spec.dims;
  if (dims != 2 && dims != 3) fail(spec, "dims must be 2 or 3, got " + std::to_string(dims));
  const int64_t n = spec.rows;
  const int32_t k = spec.neighbors;
  if (k < 1 || k >= n) fail(spec, "neighbors must be 1..rows-1, got " + std::to_string(k));
  check_nnz_estimate(spec.family, static_cast<double>(n) * k);
  // Buckets of about 2 points each.
  const int64_t g = std::max<int64_t>(
      1, static_cast<int64_t>(std::floor(std::pow(static_cast<double>(n) / 2, 1.0 / dims))));
  const double h = 1.0 / static_cast<double>(g);
  std::vector<double> raw(static_cast<size_t>(n * dims));
  std::vector<int64_t> cell(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    rng r(spec.seed, static_cast<uint64_t>(i));
    int64_t c = 0;
    for (int d = 0; d < dims; ++d) {
      const double x = r.uniform();
      raw[i * dims + d] = x;
      c = c * g + std::min<int64_t>(g - 1, static_cast<int64_t>(x / h));
    }
    cell[i] = c;
  }
  // Natural numbering: by bucket (stable), so bucket b holds points start[b]..start[b+1].
  int64_t cells = 1;
  for (int d = 0; d < dims; ++d) cells *= g;
  std::vector<int64_t> start(static_cast<size_t>(cells) + 1, 0);
  for (int64_t i = 0; i < n; ++i) ++start[cell[i] + 1];
  for (int64_t b = 0; b < cells; ++b) start[b + 1] += start[b];
  std::vector<double> pos(raw.size());
  {
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = next[cell[i]]++;
      for (int d = 0; d < dims; ++d) pos[at * dims + d] = raw[i * dims + d];
    }
  }
  std::vector<double>().swap(raw);
  std::vector<int64_t>().swap(cell);

  const csr_matrix pattern =
      build_pattern(static_cast<int32_t>(n), [&](int32_t i, std::vector<int32_t>& out) {
        const double* p = &pos[static_cast<size_t>(i) * dims];
        int64_t c[3] = {0, 0, 0};
        for (int d = 0; d < dims; ++d)
          c[d] = std::min<int64_t>(g - 1, static_cast<int64_t>(p[d] / h));
        std::priority_queue<std::pair<double, int32_t>> best;  // max-heap of the k nearest
        auto visit = [&](int64_t b) {
          for (int64_t j = start[b]; j < start[b + 1]; ++j) {
            if (j == i) continue;
            double d2 = 0;
            for (int d = 0; d < dims; ++d) {
              const double t = pos[j * dims + d] - p[d];
              d2 += t * t;
            }
            if (static_cast<int32_t>(best.size()) < k) {
              best.emplace(d2, static_cast<int32_t>(j));
            } else if (std::make_pair(d2, static_cast<int32_t>(j)) < best.top()) {
              best.pop();
              best.emplace(d2, static_cast<int32_t>(j));
            }
          }
        };
        // Shells of buckets at Chebyshev distance r; points beyond shell r are >= r*h away.
        for (int64_t r = 0;; ++r) {
          const int64_t z_lo = dims == 3 ? -r : 0, z_hi = dims == 3 ? r : 0;
          for (int64_t a = -r; a <= r; ++a)
            for (int64_t b = -r; b <= r; ++b)
              for (int64_t e = z_lo; e <= z_hi; ++e) {
                if (std::max({std::abs(a), std::abs(b), std::abs(e)}) != r) continue;
                const int64_t q[3] = {c[0] + a, c[1] + b, c[2] + e};
                bool inside = true;
                int64_t id = 0;
                for (int d = 0; d < dims; ++d) {
                  inside = inside && q[d] >= 0 && q[d] < g;
                  id = id * g + q[d];
                }
                if (inside) visit(id);
              }
          const double reach = static_cast<double>(r) * h;
          if (static_cast<int32_t>(best.size()) == k && best.top().first <= reach * reach) break;
          if (r > g) break;  // every bucket seen
        }
        for (; !best.empty(); best.pop()) out.push_back(best.top().second);
      });
  return pattern;
}

// A + A^T as a pattern: each node's own list and the nodes that list it.
csr_matrix symmetric_closure(const csr_matrix& a) {
  std::vector<int32_t> listed_by_ptr(static_cast<size_t>(a.rows) + 1, 0),
      listed_by(a.col_idx.size());
  for (const int32_t c : a.col_idx) ++listed_by_ptr[static_cast<size_t>(c) + 1];
  for (int32_t r = 0; r < a.rows; ++r) listed_by_ptr[r + 1] += listed_by_ptr[r];
  std::vector<int32_t> next(listed_by_ptr.begin(), listed_by_ptr.end() - 1);
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) listed_by[next[a.col_idx[p]]++] = r;
  return build_pattern(a.rows, [&](int32_t node, std::vector<int32_t>& out) {
    out.insert(out.end(), a.col_idx.begin() + a.row_ptr[node],
               a.col_idx.begin() + a.row_ptr[node + 1]);
    out.insert(out.end(), listed_by.begin() + listed_by_ptr[node],
               listed_by.begin() + listed_by_ptr[node + 1]);
  });
}

}  // namespace

csr_matrix generate_knn(const generator_spec& spec) {
  return finish_graph(spec, knn_pattern(spec), 1);
}

csr_matrix generate_knn_sym(const generator_spec& spec) {
  return finish_graph(spec, symmetric_closure(knn_pattern(spec)), 1);
}

}  // namespace sparserl::gen
