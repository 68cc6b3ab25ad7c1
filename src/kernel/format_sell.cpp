// SELL-C-sigma: rows sorted by length in windows of sigma, slices of C rows padded to their
// longest.
#include "kernel/format_registry.h"
#include "sparse/formats.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>& params,
                    int64_t max_elements) {
  sell_matrix m = to_sell(a, static_cast<int32_t>(params.at("C")),
                          static_cast<int32_t>(params.at("sigma")), max_elements);
  format_data d;
  d.work_rows = a.rows;
  d.facts = {{"C", m.C}, {"sigma", m.sigma}, {"slices", m.num_slices}};
  d.args = {scalar_arg("slice_height", m.C),
            scalar_arg("num_slices", m.num_slices),
            int_array("slice_ptr", std::move(m.slice_ptr)),
            int_array("slice_width", std::move(m.slice_width)),
            int_array("perm", std::move(m.perm)),
            int_array("col_idx", std::move(m.col_idx)),
            float_array("values", std::move(m.values))};
  return d;
}

}  // namespace

format_info sell() {
  using k = arg_kind;
  constexpr int64_t i32_max = INT32_MAX;
  return {format_kind::sell,
          "SELL",
          "sliced ELLPACK: slices of C rows, sorted by length in windows of sigma rows",
          {{"C", 32, 1, 1024, true, "SPARSERL_C", "slice height (rows per slice)"},
           {"sigma", 1, 1, i32_max, false, "SPARSERL_SIGMA",
            "sorting window in rows (1 = no sorting)"}},
          // Named slice_height, not C: SpMM's output is C (see docs/kernel-abi.md).
          {{k::i32, "slice_height"},
           {k::i32, "num_slices"},
           {k::i32_array, "slice_ptr"},
           {k::i32_array, "slice_width"},
           {k::i32_array, "perm"},
           {k::i32_array, "col_idx"},
           {k::f32_array, "values"}},
          {{"sell", false}},
          convert};
}

}  // namespace sparserl::format_files
