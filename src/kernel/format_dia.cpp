// DIA: one full-length stripe per occupied diagonal, no column indices.
#include "kernel/format_registry.h"
#include "sparse/formats.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>&,
                    int64_t max_elements) {
  dia_matrix m = to_dia(a, max_elements);
  format_data d;
  d.work_rows = a.rows;
  d.facts = {{"diagonals", m.num_diags}};
  d.args = {scalar_arg("num_diags", m.num_diags), int_array("offsets", std::move(m.offsets)),
            float_array("values", std::move(m.values))};
  return d;
}

}  // namespace

format_info dia() {
  using k = arg_kind;
  return {format_kind::dia,
          "DIA",
          "diagonal storage: a rows-long stripe per occupied diagonal",
          {},
          {{k::i32, "num_diags"}, {k::i32_array, "offsets"}, {k::f32_array, "values"}},
          {{"dia", false}},
          convert};
}

}  // namespace sparserl::format_files
