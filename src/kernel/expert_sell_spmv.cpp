// SELL-C-sigma SpMV: a thread per sorted row position; the C lanes of a slice read consecutive
// addresses for each column of the slice, and the result goes to the original row through perm.
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"sell",
          sparse_op::spmv,
          format_kind::sell,
          "one thread per row of a C-row slice; slice width = its longest row after sorting in "
          "sigma windows",
          {{"C", {8, 32}, "slice height (a power of two <= 1024)"},
           {"sigma", {1, 256, 4096}, "sorting window in rows (1 = no sorting)"}},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kC = SPARSERL_C;  // slice height, as in the FORMAT line

extern "C" __global__ void spmv_sell(@ARGS@) {
  const long long pos = (long long)blockIdx.x * kBlock + threadIdx.x;  // sorted position
  if (pos >= rows) return;
  const int slice = (int)(pos / kC), lane = (int)(pos % kC);
  const int width = slice_width[slice];
  size_t at = (size_t)slice_ptr[slice] + lane;
  float sum = 0.0f;
  for (int j = 0; j < width; ++j, at += kC) {
    const int c = col_idx[at];
    if (c < 0) break;  // a row fills its first slots: the rest is padding
    sum += values[at] * __ldg(&x[c]);
  }
  y[perm[pos]] = sum;
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  // Sorting only matters when row lengths vary; on even rows sigma = 1 is the same layout.
  std::vector<expert_config> out;
  const bool varied = f.row_length_std > 0.1 * std::max(1.0, f.row_length_mean);
  for (int64_t slice : {8, 32})
    for (int64_t sigma : {1, 256, 4096}) {
      if (sigma > 1 && !varied) continue;
      if (!sell_padding_bounded(f, slice, sigma)) continue;
      for (int64_t block : {128, 256})
        out.push_back(make_config(info(), {{"C", slice}, {"sigma", sigma}}, {{"block", block}}));
    }
  return out;
}

}  // namespace

// The slice holding the longest row alone stores C x that row; beyond twice the nonzeros it
// dominates the traffic. Unsorted slices of uneven rows (ELL padding > 3) pad like ELL. And one
// thread walks each row: a row of thousands of nonzeros is a serial chain of dependent loads
// (measured on an H200: 50x slower than csr_vector on an R-MAT graph with rows of ~3000).
bool sell_padding_bounded(const matrix_features& f, int64_t C, int64_t sigma) {
  if (f.nnz == 0) return true;
  if (f.row_length_max > 2048) return false;
  if (static_cast<double>(f.row_length_max) * C > 2.0 * f.nnz) return false;
  return sigma > 1 || f.ell_padding_ratio <= 3;
}

namespace {

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), slice = c.format_param("C");
  require_block(c, block);
  require(is_pow2(slice) && slice <= 1024, c, "C must be a power of two <= 1024");
  require(c.format_param("sigma") >= 1, c, "sigma must be >= 1");
  return emit_rows_kernel(c, format_kind::sell, source, block);
}

}  // namespace

family sell_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
