// ELL: every row padded to the longest, column-major.
#include "kernel/format_registry.h"
#include "sparse/formats.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>&,
                    int64_t max_elements) {
  ell_matrix m = to_ell(a, max_elements);
  format_data d;
  d.work_rows = a.rows;
  d.facts = {{"width", m.width}};
  d.args = {scalar_arg("width", m.width), int_array("col_idx", std::move(m.col_idx)),
            float_array("values", std::move(m.values))};
  return d;
}

}  // namespace

format_info ell() {
  using k = arg_kind;
  return {format_kind::ell,
          "ELL",
          "ELLPACK: each row padded to the longest row, column-major",
          {},
          {{k::i32, "width"}, {k::i32_array, "col_idx"}, {k::f32_array, "values"}},
          {{"ell", false}},
          convert};
}

}  // namespace sparserl::format_files
