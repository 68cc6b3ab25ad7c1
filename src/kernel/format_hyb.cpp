// HYB: each row's first `width` entries as ELL, the rest as COO.
#include "kernel/format_registry.h"
#include "sparse/formats.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>& params,
                    int64_t max_elements) {
  int32_t width = static_cast<int32_t>(params.at("width"));
  if (width == 0) width = automatic_hyb_width(a, max_elements);
  hyb_matrix m = to_hyb(a, width, max_elements);
  format_data d;
  d.work_rows = a.rows;
  d.work_nnz = d.coo_nnz = m.coo.nnz();
  const int64_t ell_elements = static_cast<int64_t>(m.ell.values.size());
  d.facts = {{"width", m.ell.width}, {"ell_elements", ell_elements}, {"coo_entries", m.coo.nnz()}};
  d.args = {scalar_arg("width", m.ell.width),
            int_array("ell_col_idx", std::move(m.ell.col_idx)),
            float_array("ell_values", std::move(m.ell.values)),
            scalar_arg("coo_nnz", m.coo.nnz()),
            int_array("coo_row_idx", std::move(m.coo.row_idx)),
            int_array("coo_col_idx", std::move(m.coo.col_idx)),
            float_array("coo_values", std::move(m.coo.values))};
  return d;
}

}  // namespace

format_info hyb() {
  using k = arg_kind;
  constexpr int64_t i32_max = INT32_MAX;
  return {format_kind::hyb,
          "HYB",
          "hybrid: the first width entries of each row as ELL, the rest as COO",
          {{"width", 0, 0, i32_max, false, "SPARSERL_WIDTH", "ELL width (0 = automatic)"}},
          {{k::i32, "width"},
           {k::i32_array, "ell_col_idx"},
           {k::f32_array, "ell_values"},
           {k::i32, "coo_nnz"},
           {k::i32_array, "coo_row_idx"},
           {k::i32_array, "coo_col_idx"},
           {k::f32_array, "coo_values"}},
          {{"hyb_ell", false}, {"hyb_coo", true}},
          convert};
}

}  // namespace sparserl::format_files
