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
          convert};
}

}  // namespace sparserl::format_files
