// The step every graph family shares: node order, dof blocks, values.
#include <algorithm>

#include "sparse/generators_detail.h"
#include "sparse/node_order.h"

namespace sparserl::gen {

csr_matrix build_pattern(int32_t nodes, const neighbour_filler& fill) {
  return build_rows(nodes, nodes,
                    [&fill](int32_t node, std::vector<int32_t>& cols, std::vector<float>& values) {
                      const size_t start = cols.size();
                      fill(node, cols);
                      sort_unique_tail(cols, start);
                      values.resize(cols.size(), 0.0f);
                    });
}

csr_matrix finish_graph(const generator_spec& spec, const csr_matrix& pattern, int32_t dof) {
  const std::vector<int32_t> order = node_order(spec.order, pattern, spec.seed);
  const std::vector<int32_t> position =
      inverse_permutation(order, pattern.rows, spec.family.c_str());
  check_nnz_estimate(spec.family, static_cast<double>(pattern.nnz()) * dof * dof);
  const int64_t rows = int64_t{pattern.rows} * dof;
  if (rows > INT32_MAX) fail(spec, "more than 2^31-1 rows");
  return build_rows(static_cast<int32_t>(rows), static_cast<int32_t>(rows),
                    [&](int32_t row, std::vector<int32_t>& cols, std::vector<float>& values) {
                      const int32_t old = order[static_cast<size_t>(row / dof)];
                      const size_t start = cols.size();
                      for (int32_t p = pattern.row_ptr[old]; p < pattern.row_ptr[old + 1]; ++p)
                        cols.push_back(position[static_cast<size_t>(pattern.col_idx[p])]);
                      std::sort(cols.begin() + static_cast<std::ptrdiff_t>(start), cols.end());
                      const size_t nodes = cols.size() - start;
                      // Expand in place, back to front, each node into its dof columns.
                      cols.resize(start + nodes * static_cast<size_t>(dof));
                      for (size_t i = nodes; i-- > 0;)
                        for (int32_t a = dof; a-- > 0;)
                          cols[start + i * dof + a] = cols[start + i] * dof + a;
                      rng g(spec.seed, value_stream_offset + static_cast<uint64_t>(row));
                      append_random_values(g, cols.size() - start, values);
                    });
}

}  // namespace sparserl::gen
