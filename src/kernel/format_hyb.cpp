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

// The conversion above as host code for exported headers (format_registry.h).
constexpr const char* host_conversion = R"host(
// Each row's first `width` entries as ELL
                                    // (column-major, padding -1 / 0), the rest as COO in
                                    // CSR order. Width 0 = automatic: the ceil(rows /
                                    // 3)-th longest row, within the padding limit.
                                    long long ell_width = width;
                                    int longest = 0;
                                    for (int r = 0; r < a.rows; ++r) longest = std::max(longest, a.row_length(r));
                                    if (ell_width == 0 && a.rows > 0) {
                                      std::vector<int> lengths(static_cast<size_t>(a.rows));
                                      for (int r = 0; r < a.rows; ++r) lengths[r] = a.row_length(r);
                                      const size_t at = (static_cast<size_t>(a.rows) + 2) / 3 - 1;
                                      std::nth_element(lengths.begin(), lengths.begin() + at, lengths.end(), std::greater<int>());
                                      ell_width = std::min<long long>(lengths[at], max_elements / a.rows);
                                    }
                                    ell_width = std::min<long long>(ell_width, longest);
                                    const long long elements = ell_width * a.rows;
                                    check_elements("HYB", elements, max_elements);
                                    f.width = static_cast<int>(ell_width);
                                    f.ell_col_idx.assign(static_cast<size_t>(elements), -1);
                                    f.ell_values.assign(static_cast<size_t>(elements), 0.0f);
                                    for (int r = 0; r < a.rows; ++r)
                                      for (int j = 0; j < a.row_length(r); ++j) {
                                        const int e = a.row_ptr[r] + j;
                                        if (j < ell_width) {
                                          f.ell_col_idx[static_cast<long long>(j) * a.rows + r] = a.col_idx[e];
                                          f.ell_values[static_cast<long long>(j) * a.rows + r] = a.values[e];
                                        } else {
                                          f.coo_row_idx.push_back(r);
                                          f.coo_col_idx.push_back(a.col_idx[e]);
                                          f.coo_values.push_back(a.values[e]);
                                        }
                                      }
                                    f.coo_nnz = static_cast<int>(f.coo_values.size());
                                    f.work_rows = a.rows;
                                    f.work_nnz = f.coo_nnz;
)host";

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
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
