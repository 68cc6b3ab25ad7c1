// BSR: dense r x c blocks, row-major inside each block, block rows like CSR rows.
#include "kernel/format_registry.h"
#include "sparse/formats.h"

namespace sparserl::format_files {
namespace {

format_data convert(const csr_matrix& a, const std::map<std::string, int64_t>& params,
                    int64_t max_elements) {
  bsr_matrix m = to_bsr(a, static_cast<int32_t>(params.at("r")),
                        static_cast<int32_t>(params.at("c")), max_elements);
  format_data d;
  d.work_rows = m.block_rows;
  d.facts = {{"r", m.r},
             {"c", m.c},
             {"blocks", m.nnz_blocks()},
             {"block_rows", m.block_rows},
             {"block_cols", m.block_cols}};
  d.args = {scalar_arg("r", m.r),
            scalar_arg("c", m.c),
            scalar_arg("block_rows", m.block_rows),
            int_array("block_row_ptr", std::move(m.block_row_ptr)),
            int_array("block_col_idx", std::move(m.block_col_idx)),
            float_array("values", std::move(m.values))};
  return d;
}

// The conversion above as host code for exported headers (format_registry.h).
constexpr const char* host_conversion = R"host(
// Dense r x c blocks, row-major inside a block; block
                                    // columns ascend within a block row and
                                    // only blocks holding an entry are stored.
                                    const int block_rows = static_cast<int>((static_cast<long long>(a.rows) + r - 1) / r);
                                    f.r = static_cast<int>(r);
                                    f.c = static_cast<int>(c);
                                    f.block_rows = block_rows;
                                    f.block_row_ptr.assign(static_cast<size_t>(block_rows) + 1, 0);
                                    for (int br = 0; br < block_rows; ++br) {
                                      const int first = a.row_ptr[br * r];
                                      const int last = a.row_ptr[std::min<long long>(a.rows, br * r + r)];
                                      std::vector<int> columns;
                                      for (int e = first; e < last; ++e) columns.push_back(static_cast<int>(a.col_idx[e] / c));
                                      std::sort(columns.begin(), columns.end());
                                      columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
                                      f.block_col_idx.insert(f.block_col_idx.end(), columns.begin(), columns.end());
                                      f.block_row_ptr[br + 1] = static_cast<int>(f.block_col_idx.size());
                                    }
                                    const long long elements = static_cast<long long>(f.block_col_idx.size()) * r * c;
                                    check_elements("BSR", elements, max_elements);
                                    f.values.assign(static_cast<size_t>(elements), 0.0f);
                                    for (int row = 0; row < a.rows; ++row) {
                                      const int br = static_cast<int>(row / r);
                                      const auto first = f.block_col_idx.begin() + f.block_row_ptr[br];
                                      const auto last = f.block_col_idx.begin() + f.block_row_ptr[br + 1];
                                      for (int e = a.row_ptr[row]; e < a.row_ptr[row + 1]; ++e) {
                                        const long long b = std::lower_bound(first, last, a.col_idx[e] / c) - f.block_col_idx.begin();
                                        f.values[(b * r + (row - br * r)) * c + a.col_idx[e] % c] = a.values[e];
                                      }
                                    }
                                    f.work_rows = block_rows;
)host";

}  // namespace

format_info bsr() {
  using k = arg_kind;
  return {format_kind::bsr,
          "BSR",
          "block sparse rows: dense r x c blocks, row-major inside a block",
          {{"r", 4, 1, 64, false, "SPARSERL_BLOCK_R", "block rows"},
           {"c", 4, 1, 64, false, "SPARSERL_BLOCK_C", "block columns"}},
          {{k::i32, "r"},
           {k::i32, "c"},
           {k::i32, "block_rows"},
           {k::i32_array, "block_row_ptr"},
           {k::i32_array, "block_col_idx"},
           {k::f32_array, "values"}},
          {{"bsr", false}},
          convert,
          host_conversion};
}

}  // namespace sparserl::format_files
