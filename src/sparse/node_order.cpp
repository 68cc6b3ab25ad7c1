#include "sparse/node_order.h"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/cuthill_mckee_ordering.hpp>
#include <boost/property_map/property_map.hpp>
#include <boost/range/iterator_range.hpp>
#include <deque>
#include <numeric>
#include <utility>

#include "sparse/error.h"
#include "sparse/generators_detail.h"

namespace sparserl {

std::vector<int32_t> reverse_cuthill_mckee_order(const csr_matrix& pattern) {
  if (pattern.rows != pattern.cols) throw error("reverse Cuthill-McKee needs a square pattern");
  using graph =
      boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                         boost::no_property, uint32_t, uint32_t>;
  // Both directions of every off-diagonal entry: Boost's RCM walks out-edges only.
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  edges.reserve(static_cast<size_t>(pattern.nnz()) * 2);
  for (int32_t r = 0; r < pattern.rows; ++r)
    for (int32_t p = pattern.row_ptr[r]; p < pattern.row_ptr[r + 1]; ++p) {
      const int32_t c = pattern.col_idx[p];
      if (c == r) continue;
      edges.emplace_back(r, c);
      edges.emplace_back(c, r);
    }
  const graph g(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
                static_cast<uint32_t>(pattern.rows));
  std::vector<std::pair<uint32_t, uint32_t>>().swap(edges);
  // Boost's own start search re-whitens every vertex for each component (O(n x components):
  // minutes on a road graph with its many small islands), so find one start per component here,
  // George-Liu's pseudo-peripheral vertex by BFS sweeps confined to the component.
  std::vector<int32_t> level(static_cast<size_t>(pattern.rows), -1);
  std::vector<uint32_t> visited;
  auto sweep = [&](uint32_t root) {  // BFS levels from root; returns the eccentricity
    for (uint32_t v : visited) level[v] = -1;
    visited.assign(1, root);
    level[root] = 0;
    for (size_t head = 0; head < visited.size(); ++head) {
      const uint32_t v = visited[head];
      for (auto e : boost::make_iterator_range(out_edges(v, g))) {
        const uint32_t w = static_cast<uint32_t>(target(e, g));
        if (level[w] < 0) level[w] = level[v] + 1, visited.push_back(w);
      }
    }
    return level[visited.back()];
  };
  std::vector<char> seen(static_cast<size_t>(pattern.rows), 0);
  std::deque<uint32_t> starts;
  for (uint32_t v = 0; v < static_cast<uint32_t>(pattern.rows); ++v) {
    if (seen[v]) continue;
    uint32_t root = v;
    int32_t eccentricity = sweep(root);
    for (uint32_t w : visited) seen[w] = 1;
    for (int round = 0; round < 8; ++round) {  // a few sweeps find a near-peripheral vertex
      uint32_t candidate = visited.back();     // lowest degree on the last level
      for (auto it = visited.rbegin(); it != visited.rend() && level[*it] == eccentricity; ++it)
        if (out_degree(*it, g) < out_degree(candidate, g)) candidate = *it;
      const int32_t farther = sweep(candidate);
      if (farther <= eccentricity) break;
      root = candidate, eccentricity = farther;
    }
    starts.push_back(root);
  }
  for (uint32_t v : visited) level[v] = -1;
  std::vector<boost::default_color_type> colors(static_cast<size_t>(pattern.rows));
  const auto index = get(boost::vertex_index, g);
  std::vector<uint32_t> order(static_cast<size_t>(pattern.rows));
  boost::cuthill_mckee_ordering(g, starts, order.rbegin(),
                                boost::make_iterator_property_map(colors.begin(), index),
                                boost::make_out_degree_map(g));
  return std::vector<int32_t>(order.begin(), order.end());
}

std::vector<int32_t> random_order(int32_t nodes, uint64_t seed) {
  std::vector<int32_t> order(static_cast<size_t>(nodes));
  std::iota(order.begin(), order.end(), 0);
  gen::rng g(seed, gen::global_stream - 1);
  for (int32_t i = nodes - 1; i > 0; --i)  // Fisher-Yates with our own (portable) generator
    std::swap(order[i], order[g.below(static_cast<uint64_t>(i) + 1)]);
  return order;
}

std::vector<int32_t> hubs_first_order(const csr_matrix& pattern) {
  std::vector<int32_t> order(static_cast<size_t>(pattern.rows));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t u, int32_t v) {
    return pattern.row_length(u) > pattern.row_length(v);
  });
  return order;
}

std::vector<int32_t> node_order(const std::string& name, const csr_matrix& pattern, uint64_t seed) {
  if (name == "natural") {
    std::vector<int32_t> order(static_cast<size_t>(pattern.rows));
    std::iota(order.begin(), order.end(), 0);
    return order;
  }
  if (name == "random") return random_order(pattern.rows, seed);
  if (name == "rcm") return reverse_cuthill_mckee_order(pattern);
  throw error("unknown node order '" + name + "': expected natural, random or rcm");
}

std::vector<int32_t> inverse_permutation(const std::vector<int32_t>& perm, int32_t n,
                                         const char* what) {
  if (perm.size() != static_cast<size_t>(n))
    throw error(std::string(what) + ": the order has " + std::to_string(perm.size()) +
                " entries for " + std::to_string(n) + " rows");
  std::vector<int32_t> position(perm.size(), -1);
  for (size_t p = 0; p < perm.size(); ++p) {
    const int32_t old = perm[p];
    if (old < 0 || old >= n || position[static_cast<size_t>(old)] >= 0)
      throw error(std::string(what) + ": the order is not a permutation of 0.." +
                  std::to_string(n - 1));
    position[static_cast<size_t>(old)] = static_cast<int32_t>(p);
  }
  return position;
}

int64_t matrix_bandwidth(const csr_matrix& a) { return distance_from_diagonal(a).largest; }

}  // namespace sparserl
