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

// The conversion above as host code for exported headers (format_registry.h).
constexpr const char* host_conversion = R"host(
// Column-major, width = the longest row: slot j of
                                    // row r at j * rows + r; padding -1 / 0.
                                    int width = 0;
                                    for (int r = 0; r < a.rows; ++r) width = std::max(width, a.row_length(r));
                                    const long long elements = static_cast<long long>(a.rows) * width;
                                    check_elements("ELL", elements, max_elements);
                                    f.width = width;
                                    f.col_idx.assign(static_cast<size_t>(elements), -1);
                                    f.values.assign(static_cast<size_t>(elements), 0.0f);
                                    for (int r = 0; r < a.rows; ++r)
                                      for (int j = 0; j < a.row_length(r); ++j) {
                                        const long long at = static_cast<long long>(j) * a.rows + r;
                                        f.col_idx[at] = a.col_idx[a.row_ptr[r] + j];
                                        f.values[at] = a.values[a.row_ptr[r] + j];
                                      }
                                    f.work_rows = a.rows;
)host";

}  // namespace

format_info ell() {
  using k = arg_kind;
  return {format_kind::ell,
          "ELL",
          "ELLPACK: each row padded to the longest row, column-major",
          {},
          {{k::i32, "width"}, {k::i32_array, "col_idx"}, {k::f32_array, "values"}},
          {{"ell", false}},
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
