// COO: (row, column, value) triples sorted by (row, column); an init entry zeroes the output.
#include "kernel/format_registry.h"
#include "sparse/formats.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>&, int64_t) {
  coo_matrix m = to_coo(a);
  format_data d;
  d.work_rows = a.rows;
  d.work_nnz = d.coo_nnz = m.nnz();
  d.args = {scalar_arg("nnz", m.nnz()), int_array("row_idx", std::move(m.row_idx)),
            int_array("col_idx", std::move(m.col_idx)), float_array("values", std::move(m.values))};
  return d;
}

// The conversion above as host code for exported headers (format_registry.h).
constexpr const char* host_conversion = R"host(
// The CSR entries in CSR order, i.e. sorted by (row, column), with explicit rows.
f.nnz = static_cast<int>(a.nnz);
f.row_idx.resize(a.col_idx.size());
for (int r = 0; r < a.rows; ++r)
  for (int e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e) f.row_idx[e] = r;
f.col_idx = a.col_idx;
f.values = a.values;
f.work_rows = a.rows;
f.work_nnz = a.nnz;
)host";

}  // namespace

format_info coo() {
  using k = arg_kind;
  return {format_kind::coo,
          "COO",
          "coordinate list sorted by (row, column)",
          {},
          {{k::i32, "nnz"},
           {k::i32_array, "row_idx"},
           {k::i32_array, "col_idx"},
           {k::f32_array, "values"}},
          {{"coo_init", false}, {"coo", true}},
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
