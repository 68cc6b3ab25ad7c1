// CSR16: CSR with 16-bit column offsets from each row's first column (sparse/formats.h). The
// converter refuses a matrix with a row spanning more than 65535 columns.
#include "kernel/format_registry.h"
#include "sparse/formats.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>&, int64_t) {
  csr16_matrix m = to_csr16(a);
  format_data d;
  d.work_rows = a.rows;
  d.work_nnz = m.nnz();
  d.args = {scalar_arg("nnz", m.nnz()), int_array("row_ptr", std::move(m.row_ptr)),
            int_array("col_base", std::move(m.col_base)),
            short_array("col_offset", std::move(m.col_offset)),
            float_array("values", std::move(m.values))};
  return d;
}

// The conversion above as host code for exported headers (format_registry.h).
constexpr const char* host_conversion = R"host(
// CSR with each row's first column as col_base and 16-bit column offsets from it.
f.nnz = static_cast<int>(a.nnz);
f.row_ptr = a.row_ptr;
f.values = a.values;
f.col_base.assign(static_cast<size_t>(a.rows), 0);
f.col_offset.resize(a.col_idx.size());
for (int r = 0; r < a.rows; ++r) {
  const int begin = a.row_ptr[r], end = a.row_ptr[r + 1];
  if (begin == end) continue;
  const int base = a.col_idx[begin];
  if (a.col_idx[end - 1] - base > 65535)
    throw std::runtime_error("CSR16: row " + std::to_string(r) + " spans columns " +
                             std::to_string(base) + ".." +
                             std::to_string(a.col_idx[end - 1]) +
                             ", more than a 16-bit column offset holds (use CSR)");
  f.col_base[r] = base;
  for (int e = begin; e < end; ++e)
    f.col_offset[e] = static_cast<unsigned short>(a.col_idx[e] - base);
}
f.work_rows = a.rows;
f.work_nnz = a.nnz;
)host";

}  // namespace

format_info csr16() {
  using k = arg_kind;
  return {format_kind::csr16,
          "CSR16",
          "CSR with 16-bit column offsets from each row's first column (rows span <= 65535)",
          {},
          {{k::i32, "nnz"},
           {k::i32_array, "row_ptr"},
           {k::i32_array, "col_base"},
           {k::u16_array, "col_offset"},
           {k::f32_array, "values"}},
          {{"csr16", true}},
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
