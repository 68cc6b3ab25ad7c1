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
          convert};
}

}  // namespace sparserl::format_files
