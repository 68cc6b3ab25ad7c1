// CSR: the harness's own representation, passed as it is.
#include "kernel/format_registry.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>&, int64_t) {
  format_data d;
  d.args = {scalar_arg("nnz", a.nnz()), int_array("row_ptr", a.row_ptr),
            int_array("col_idx", a.col_idx), float_array("values", a.values)};
  d.work_rows = a.rows;
  d.work_nnz = a.nnz();
  return d;
}

// The conversion above as host code for exported headers (format_registry.h).
constexpr const char* host_conversion = R"host(
// CSR is passed as it is.
                                    f.nnz = static_cast<int>(a.nnz);
                                    f.row_ptr = a.row_ptr;
                                    f.col_idx = a.col_idx;
                                    f.values = a.values;
                                    f.work_rows = a.rows;
                                    f.work_nnz = a.nnz;
)host";

}  // namespace

format_info csr() {
  using k = arg_kind;
  return {format_kind::csr,
          "CSR",
          "compressed sparse rows: row_ptr, column index and value per nonzero",
          {},
          {{k::i32, "nnz"},
           {k::i32_array, "row_ptr"},
           {k::i32_array, "col_idx"},
           {k::f32_array, "values"}},
          {{"csr", true}},
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
