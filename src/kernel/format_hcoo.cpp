// HCOO: COO whose entries in the most referenced columns name a slot of a hub table
// (sparse/formats.h). Two entry points: the init zeroes y and gathers the hubs' x into the scratch
// buffer (work[slot] = x[hub_cols[slot]]); the SpMV reads hub entries from there (an expert
// template copies it into shared memory first) and the others from x.
#include "kernel/format_registry.h"
#include "sparse/formats.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>& params, int64_t) {
  hub_coo_matrix m = to_hub_coo(a, static_cast<int32_t>(params.at("hubs")));
  format_data d;
  d.work_rows = a.rows;
  d.work_nnz = d.coo_nnz = m.nnz();
  int64_t hub_entries = 0;
  for (int32_t c : m.coo.col_idx) hub_entries += c < 0;
  d.facts = {{"hub_entries", hub_entries}};
  d.args = {scalar_arg("nnz", m.nnz()),
            scalar_arg("num_hubs", static_cast<int64_t>(m.hub_cols.size())),
            int_array("row_idx", std::move(m.coo.row_idx)),
            int_array("col_idx", std::move(m.coo.col_idx)),
            float_array("values", std::move(m.coo.values)),
            int_array("hub_cols", std::move(m.hub_cols)),
            scratch_arg("work")};
  return d;
}

// The conversion above as host code for exported headers (format_registry.h).
constexpr const char* host_conversion = R"host(
// COO in CSR order; entries in the `hubs` columns with the most entries (ties: lower column;
// only columns with entries) store ~slot, and hub_cols[slot] is the column.
if (hubs < 0 || hubs > 49152)
  throw std::runtime_error("HCOO: hubs must be in [0, 49152], got " + std::to_string(hubs));
f.nnz = static_cast<int>(a.nnz);
f.row_idx.resize(a.col_idx.size());
for (int r = 0; r < a.rows; ++r)
  for (int e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e) f.row_idx[e] = r;
std::vector<long long> count(static_cast<size_t>(a.cols), 0);
for (int c : a.col_idx) ++count[c];
std::vector<int> order(static_cast<size_t>(a.cols));
for (int c = 0; c < a.cols; ++c) order[c] = c;
std::stable_sort(order.begin(), order.end(), [&](int u, int v) { return count[u] > count[v]; });
f.hub_cols.clear();
for (int c : order) {
  if (static_cast<long long>(f.hub_cols.size()) == hubs || count[c] == 0) break;
  f.hub_cols.push_back(c);
}
f.num_hubs = static_cast<int>(f.hub_cols.size());
std::vector<int> slot(static_cast<size_t>(a.cols), -1);
for (int i = 0; i < f.num_hubs; ++i) slot[f.hub_cols[i]] = i;
f.col_idx = a.col_idx;
for (int& c : f.col_idx)
  if (slot[c] >= 0) c = ~slot[c];
f.values = a.values;
f.work_rows = a.rows;
f.work_nnz = a.nnz;
)host";

}  // namespace

format_info hcoo() {
  using k = arg_kind;
  return {format_kind::hcoo,
          "HCOO",
          "COO whose entries in the most referenced columns name a slot of a hub table, the "
          "hubs' x gathered into a scratch buffer",
          {{"hubs", 12288, 0, hub_coo_matrix::max_hubs, false, "SPARSERL_HUBS",
            "hub columns at most (their x fits a block's shared memory: 4 bytes each)"}},
          {{k::i32, "nnz"},
           {k::i32, "num_hubs"},
           {k::i32_array, "row_idx"},
           {k::i32_array, "col_idx"},
           {k::f32_array, "values"},
           {k::i32_array, "hub_cols"},
           {k::scratch, "work"}},
          {{"hcoo_init", false}, {"hcoo", true}},
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
