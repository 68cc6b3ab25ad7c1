// Hub COO: COO whose entries in the most referenced columns name a slot of a small table of those
// columns instead. A kernel copies the hubs' x into shared memory once per block, so on power-law
// matrices (a few columns hold a large share of the entries, scattered over x in a random
// order) those gathers stop costing a 32-byte sector of L2 each.
#include <algorithm>
#include <numeric>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"
#include "sparse/formats.h"

namespace sparserl {

hub_coo_matrix to_hub_coo(const csr_matrix& a, int32_t hubs) {
  if (hubs < 0 || hubs > hub_coo_matrix::max_hubs)
    throw error("HCOO: hubs must be in [0, " + std::to_string(hub_coo_matrix::max_hubs) +
                "], got " + std::to_string(hubs));
  hub_coo_matrix m;
  m.coo = to_coo(a);
  std::vector<int64_t> count(static_cast<size_t>(a.cols), 0);
  for (int32_t c : m.coo.col_idx) ++count[c];
  // Columns by decreasing entry count, ties by column: the first `hubs` with entries.
  std::vector<int32_t> order(static_cast<size_t>(a.cols));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t u, int32_t v) { return count[u] > count[v]; });
  for (int32_t c : order) {
    if (static_cast<int32_t>(m.hub_cols.size()) == hubs || count[c] == 0) break;
    m.hub_cols.push_back(c);
  }
  std::vector<int32_t> slot(static_cast<size_t>(a.cols), -1);
  for (size_t i = 0; i < m.hub_cols.size(); ++i) slot[m.hub_cols[i]] = static_cast<int32_t>(i);
  for (int32_t& c : m.coo.col_idx)
    if (slot[c] >= 0) c = ~slot[c];
  return m;
}

namespace {

// The column of stored entry e.
int32_t column_of(const hub_coo_matrix& a, size_t e) {
  const int32_t c = a.coo.col_idx[e];
  return c >= 0 ? c : a.hub_cols[~c];
}

// COO's checks (sizes, rows sorted and inside), then the hub table and every entry's column or
// slot.
void check_hub_coo(const hub_coo_matrix& a, const char* what) {
  detail::check_coo_shape(a.coo, what);
  if (a.hub_cols.size() > static_cast<size_t>(hub_coo_matrix::max_hubs))
    throw error(std::string(what) + ": more than " + std::to_string(hub_coo_matrix::max_hubs) +
                " hub columns");
  for (int32_t c : a.hub_cols)
    if (c < 0 || c >= a.coo.cols)
      throw error(std::string(what) + ": hub column outside the matrix");
  for (size_t e = 0; e < a.coo.col_idx.size(); ++e) {
    const int32_t c = a.coo.col_idx[e];
    if (c >= a.coo.cols || (c < 0 && static_cast<size_t>(~c) >= a.hub_cols.size()))
      throw error(std::string(what) + ": entry " + std::to_string(e) +
                  " names a column or hub slot that does not exist");
  }
}

}  // namespace

csr_matrix to_csr(const hub_coo_matrix& a) {
  check_hub_coo(a, "HCOO to CSR");
  const coo_matrix& coo = a.coo;
  csr_matrix m;
  m.rows = coo.rows;
  m.cols = coo.cols;
  m.row_ptr.assign(static_cast<size_t>(coo.rows) + 1, 0);
  for (int32_t r : coo.row_idx) ++m.row_ptr[r + 1];
  for (int32_t r = 0; r < coo.rows; ++r) m.row_ptr[r + 1] += m.row_ptr[r];
  m.values = coo.values;
  m.col_idx.resize(coo.values.size());
  for (size_t e = 0; e < coo.values.size(); ++e) m.col_idx[e] = column_of(a, e);
  validate_csr(m);
  return m;
}

void spmv(const hub_coo_matrix& a, const float* x, float* y) {
  check_hub_coo(a, "HCOO spmv");
  const coo_matrix& coo = a.coo;
  std::vector<double> acc(static_cast<size_t>(coo.rows), 0.0);
  for (size_t e = 0; e < coo.values.size(); ++e)
    acc[coo.row_idx[e]] += static_cast<double>(coo.values[e]) * x[column_of(a, e)];
  for (int32_t r = 0; r < coo.rows; ++r) y[r] = static_cast<float>(acc[r]);
}

}  // namespace sparserl
