// RCSR: the square matrix renumbered symmetrically, B = P A P^T, as CSR plus the permutation and a
// scratch buffer (sparse/formats.h). The numbering is reverse Cuthill-McKee, or with hubs_first=1
// the nodes by decreasing degree (sparse/node_order.h). Two entry points: the gather
// (work[p] = x[perm[p]]) and the SpMV on B, which writes y[perm[p]]. The converter refuses a
// non-square matrix.
#include <algorithm>
#include <cstdlib>

#include "kernel/format_registry.h"
#include "sparse/formats.h"
#include "sparse/node_order.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>& params, int64_t) {
  rcsr_matrix m = params.at("hubs_first") != 0 ? to_rcsr(a, hubs_first_order(a)) : to_rcsr(a);
  format_data d;
  d.work_rows = a.rows;
  d.work_nnz = m.nnz();
  // What the renumbering bought, for `matrix convert`: max |col - row| before and after.
  int64_t reordered = 0;
  for (int32_t p = 0; p < m.rows; ++p)
    for (int32_t e = m.row_ptr[p]; e < m.row_ptr[p + 1]; ++e)
      reordered = std::max<int64_t>(reordered, std::abs(int64_t{m.col_idx[e]} - p));
  d.facts = {{"bandwidth_original", matrix_bandwidth(a)}, {"bandwidth_reordered", reordered}};
  d.args = {scalar_arg("nnz", m.nnz()),
            int_array("perm", std::move(m.perm)),
            int_array("row_ptr", std::move(m.row_ptr)),
            int_array("col_idx", std::move(m.col_idx)),
            float_array("values", std::move(m.values)),
            scratch_arg("work")};
  return d;
}

// The conversion above as host code for exported headers (format_registry.h), both numberings
// included. Hubs first is a stable sort by decreasing row length, as sparse/node_order.cpp. Reverse
// Cuthill-McKee: the same steps as sparse/node_order.cpp (Boost's cuthill_mckee_ordering
// after George-Liu start vertices), so the same order, ties included. Boost sorts each vertex's
// newly found neighbours by degree with std::sort, which is not stable: equal degrees come out as
// the standard library's std::sort leaves them, so the arrays match the harness's exactly when
// the header is compiled against the same standard library (libstdc++); with another one a
// different (equally valid) order is possible. tests/cli/test_export_cli.cpp checks the match.
constexpr const char* host_conversion = R"host(
// The matrix renumbered symmetrically, B = P A P^T, as CSR with the permutation: hubs first or
// by reverse Cuthill-McKee.
if (a.rows != a.cols)
  throw std::runtime_error("RCSR: the matrix is " + std::to_string(a.rows) + " x " +
                           std::to_string(a.cols) +
                           "; a symmetric renumbering needs a square matrix (use CSR)");
const int n = a.rows;
f.perm.assign(static_cast<size_t>(n), 0);
if (hubs_first != 0) {
  // Hubs first: nodes by decreasing row length, equal lengths in index order.
  for (int v = 0; v < n; ++v) f.perm[v] = v;
  std::stable_sort(f.perm.begin(), f.perm.end(),
                   [&](int u, int v) { return a.row_length(u) > a.row_length(v); });
} else {
  // The graph of A + A^T: entry (r, c), c != r, adds the edges r -> c then c -> r, rows in order;
  // each vertex's edges in that order, repeats kept (degree counts them).
  std::vector<int> start(static_cast<size_t>(n) + 1, 0);
  for (int r = 0; r < n; ++r)
    for (int e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e)
      if (a.col_idx[e] != r) ++start[r + 1], ++start[a.col_idx[e] + 1];
  for (int v = 0; v < n; ++v) start[v + 1] += start[v];
  std::vector<int> adj(static_cast<size_t>(start[n]));
  std::vector<int> next(start.begin(), start.end() - 1);
  for (int r = 0; r < n; ++r)
    for (int e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e) {
      const int c = a.col_idx[e];
      if (c == r) continue;
      adj[next[r]++] = c;
      adj[next[c]++] = r;
    }
  auto degree = [&](int v) { return start[v + 1] - start[v]; };
  // One start per connected component: a pseudo-peripheral vertex by BFS sweeps (George-Liu).
  std::vector<int> level(static_cast<size_t>(n), -1), visited;
  auto sweep = [&](int root) {  // BFS levels from root; returns the eccentricity
    for (int v : visited) level[v] = -1;
    visited.assign(1, root);
    level[root] = 0;
    for (size_t head = 0; head < visited.size(); ++head) {
      const int v = visited[head];
      for (int e = start[v]; e < start[v + 1]; ++e)
        if (level[adj[e]] < 0) level[adj[e]] = level[v] + 1, visited.push_back(adj[e]);
    }
    return level[visited.back()];
  };
  std::vector<char> seen(static_cast<size_t>(n), 0);
  std::vector<int> starts;
  for (int v = 0; v < n; ++v) {
    if (seen[v]) continue;
    int root = v;
    int eccentricity = sweep(root);
    for (int w : visited) seen[w] = 1;
    for (int round = 0; round < 8; ++round) {
      int candidate = visited.back();  // lowest degree on the last level
      for (auto it = visited.rbegin(); it != visited.rend() && level[*it] == eccentricity; ++it)
        if (degree(*it) < degree(candidate)) candidate = *it;
      const int farther = sweep(candidate);
      if (farther <= eccentricity) break;
      root = candidate, eccentricity = farther;
    }
    starts.push_back(root);
  }
  // Cuthill-McKee from each start: BFS, each vertex's newly found neighbours sorted by degree
  // (std::sort, as Boost); the visiting order reversed is the permutation.
  std::vector<char> found(static_cast<size_t>(n), 0);
  std::vector<int> queue;
  int written = n;
  for (int s : starts) {
    found[s] = 1;
    queue.push_back(s);
    for (size_t head = queue.size() - 1; head < queue.size(); ++head) {
      const int u = queue[head];
      f.perm[--written] = u;
      const size_t first_new = queue.size();
      for (int e = start[u]; e < start[u + 1]; ++e)
        if (!found[adj[e]]) found[adj[e]] = 1, queue.push_back(adj[e]);
      std::sort(queue.begin() + static_cast<std::ptrdiff_t>(first_new), queue.end(),
                [&](int x, int y) { return degree(x) < degree(y); });
    }
  }
}
// B: row p is original row perm[p], its columns renumbered to positions, ascending.
std::vector<int> position(static_cast<size_t>(n));
for (int p = 0; p < n; ++p) position[f.perm[p]] = p;
f.nnz = static_cast<int>(a.nnz);
f.row_ptr.assign(static_cast<size_t>(n) + 1, 0);
for (int p = 0; p < n; ++p) f.row_ptr[p + 1] = f.row_ptr[p] + a.row_length(f.perm[p]);
f.col_idx.resize(a.col_idx.size());
f.values.resize(a.values.size());
std::vector<std::pair<int, float>> row;
for (int p = 0; p < n; ++p) {
  const int old = f.perm[p];
  row.clear();
  for (int e = a.row_ptr[old]; e < a.row_ptr[old + 1]; ++e)
    row.emplace_back(position[a.col_idx[e]], a.values[e]);
  std::sort(row.begin(), row.end(),
            [](const std::pair<int, float>& x, const std::pair<int, float>& y) {
              return x.first < y.first;
            });
  for (size_t i = 0; i < row.size(); ++i) {
    f.col_idx[f.row_ptr[p] + i] = row[i].first;
    f.values[f.row_ptr[p] + i] = row[i].second;
  }
}
f.work_rows = a.rows;
f.work_nnz = a.nnz;
)host";

}  // namespace

format_info rcsr() {
  using k = arg_kind;
  return {format_kind::rcsr,
          "RCSR",
          "CSR of the matrix renumbered by reverse Cuthill-McKee (or hubs first), x gathered into "
          "a scratch buffer (square matrices)",
          {{"hubs_first", 0, 0, 1, false, "SPARSERL_HUBS_FIRST",
            "numbering: 0 reverse Cuthill-McKee, 1 nodes by decreasing degree"}},
          {{k::i32, "nnz"},
           {k::i32_array, "perm"},
           {k::i32_array, "row_ptr"},
           {k::i32_array, "col_idx"},
           {k::f32_array, "values"},
           {k::scratch, "work"}},
          {{"rcsr_gather", false}, {"rcsr", true}},
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
