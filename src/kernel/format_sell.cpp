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

// The conversion above as host code for exported headers (format_registry.h).
constexpr const char* host_conversion = R"host(
// Rows sorted by length (descending, stable) inside windows of sigma rows, then slices of C
// sorted positions, each padded to its longest row, column-major inside the slice.
std::vector<int> perm(static_cast<size_t>(a.rows));
std::iota(perm.begin(), perm.end(), 0);
if (sigma > 1)
  for (long long begin = 0; begin < a.rows; begin += sigma) {
    const long long end = std::min<long long>(a.rows, begin + sigma);
    std::stable_sort(perm.begin() + begin, perm.begin() + end,
                     [&](int p, int q) { return a.row_length(p) > a.row_length(q); });
  }
const int num_slices = static_cast<int>((static_cast<long long>(a.rows) + C - 1) / C);
std::vector<int> slice_width(static_cast<size_t>(num_slices), 0);
std::vector<long long> slice_ptr(static_cast<size_t>(num_slices) + 1, 0);
for (int s = 0; s < num_slices; ++s) {
  for (long long i = s * C; i < std::min<long long>(a.rows, s * C + C); ++i)
    slice_width[s] = std::max(slice_width[s], a.row_length(perm[i]));
  slice_ptr[s + 1] = slice_ptr[s] + slice_width[s] * C;
}
check_elements("SELL", slice_ptr.back(), max_elements);
f.slice_height = static_cast<int>(C);
f.num_slices = num_slices;
f.slice_ptr.assign(slice_ptr.begin(), slice_ptr.end());
f.slice_width = slice_width;
f.col_idx.assign(static_cast<size_t>(slice_ptr.back()), -1);
f.values.assign(static_cast<size_t>(slice_ptr.back()), 0.0f);
for (long long i = 0; i < a.rows; ++i) {
  const long long s = i / C, lane = i % C;
  const int row = perm[i];
  for (int j = 0; j < a.row_length(row); ++j) {
    const long long at = slice_ptr[s] + j * C + lane;
    f.col_idx[at] = a.col_idx[a.row_ptr[row] + j];
    f.values[at] = a.values[a.row_ptr[row] + j];
  }
}
f.perm = perm;
f.work_rows = a.rows;
)host";

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
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
