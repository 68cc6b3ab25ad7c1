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

// The conversion above as host code for exported headers (format_registry.h).
constexpr const char* host_conversion = R"host(
// One lane of rows cells per distinct column - row offset, ascending: A[i][i +
// offsets[d]] at
// d * rows + i; cells outside the matrix hold 0.
std::vector<int> offsets;
for (int r = 0; r < a.rows; ++r)
  for (int e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e) offsets.push_back(a.col_idx[e] - r);
std::sort(offsets.begin(), offsets.end());
offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
const long long elements = static_cast<long long>(offsets.size()) * a.rows;
check_elements("DIA", elements, max_elements);
f.num_diags = static_cast<int>(offsets.size());
f.values.assign(static_cast<size_t>(elements), 0.0f);
for (int r = 0; r < a.rows; ++r)
  for (int e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e) {
    const long long d =
        std::lower_bound(offsets.begin(), offsets.end(), a.col_idx[e] - r) -
        offsets.begin();
    f.values[d * a.rows + r] = a.values[e];
  }
f.offsets = offsets;
f.work_rows = a.rows;
)host";

}  // namespace

format_info dia() {
  using k = arg_kind;
  return {format_kind::dia,
          "DIA",
          "diagonal storage: a rows-long stripe per occupied diagonal",
          {},
          {{k::i32, "num_diags"}, {k::i32_array, "offsets"}, {k::f32_array, "values"}},
          {{"dia", false}},
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
