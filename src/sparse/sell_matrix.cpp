// SELL-C-sigma (Kreutzer et al. 2014): rows sorted by descending length inside windows of sigma
// rows, then cut into slices of C rows, each slice padded only to its own longest row.
#include <algorithm>
#include <numeric>
#include <string>

#include "sparse/error.h"
#include "sparse/format_detail.h"
#include "sparse/formats.h"

namespace sparserl {

namespace {

void check_sell_params(int32_t C, int32_t sigma) {
  if (C < 1 || C > 1024 || (C & (C - 1)) != 0)
    throw error("SELL: C = " + std::to_string(C) + " must be a power of two in [1, 1024]");
  if (sigma < 1) throw error("SELL: sigma = " + std::to_string(sigma) + " must be at least 1");
}

// perm[i] = original row at sorted position i. Stable, so equal lengths keep their order and
// sigma = 1 gives the identity.
std::vector<int32_t> sort_windows(const csr_matrix& a, int32_t sigma) {
  std::vector<int32_t> perm(static_cast<size_t>(a.rows));
  std::iota(perm.begin(), perm.end(), 0);
  if (sigma == 1) return perm;
  const int64_t windows = (int64_t{a.rows} + sigma - 1) / sigma;
#pragma omp parallel for schedule(dynamic, 1) if (detail::parallel_worth(a.rows))
  for (int64_t w = 0; w < windows; ++w) {
    const int64_t begin = w * sigma, end = std::min<int64_t>(a.rows, begin + sigma);
    std::stable_sort(perm.begin() + begin, perm.begin() + end,
                     [&](int32_t p, int32_t q) { return a.row_length(p) > a.row_length(q); });
  }
  return perm;
}

// slice_width[s] = the longest row of slice s; lanes past `rows` count as empty.
std::vector<int32_t> slice_widths(const csr_matrix& a, const std::vector<int32_t>& perm, int32_t C,
                                  int32_t num_slices) {
  std::vector<int32_t> width(static_cast<size_t>(num_slices), 0);
#pragma omp parallel for schedule(static) if (detail::parallel_worth(a.rows))
  for (int32_t s = 0; s < num_slices; ++s) {
    const int64_t begin = int64_t{s} * C, end = std::min<int64_t>(a.rows, begin + C);
    for (int64_t i = begin; i < end; ++i) width[s] = std::max(width[s], a.row_length(perm[i]));
  }
  return width;
}

// Copies the rows of slice s into its column-major block; everything else is padding.
void fill_slice(const csr_matrix& a, sell_matrix& out, int32_t s) {
  const int64_t base = out.slice_ptr[s];
  for (int32_t l = 0; l < out.C; ++l) {
    const int64_t i = int64_t{s} * out.C + l;
    const int32_t row = i < a.rows ? out.perm[i] : -1;
    const int32_t len = row >= 0 ? a.row_length(row) : 0;
    for (int32_t j = 0; j < out.slice_width[s]; ++j) {
      const int64_t at = base + int64_t{j} * out.C + l;
      out.col_idx[at] = j < len ? a.col_idx[a.row_ptr[row] + j] : -1;
      out.values[at] = j < len ? a.values[a.row_ptr[row] + j] : 0.0f;
    }
  }
}

void check_sell_shape(const sell_matrix& a) {
  auto fail = [](const std::string& why) { throw error("SELL spmv: " + why); };
  if (a.rows < 0 || a.cols < 0 || a.C < 1) fail("negative dimensions or C < 1");
  if (a.num_slices != (int64_t{a.rows} + a.C - 1) / a.C) fail("num_slices != ceil(rows / C)");
  if (a.slice_ptr.size() != static_cast<size_t>(a.num_slices) + 1 ||
      a.slice_width.size() != static_cast<size_t>(a.num_slices) ||
      a.perm.size() != static_cast<size_t>(a.rows))
    fail("slice_ptr, slice_width or perm has the wrong length");
  if (a.col_idx.size() != a.values.size() ||
      static_cast<size_t>(a.slice_ptr[a.num_slices]) != a.values.size())
    fail("slice_ptr[num_slices] != number of stored elements");
  for (int32_t s = 0; s < a.num_slices; ++s)
    if (int64_t{a.slice_ptr[s + 1]} - a.slice_ptr[s] != int64_t{a.slice_width[s]} * a.C)
      fail("slice " + std::to_string(s) + " does not hold slice_width * C elements");
}

}  // namespace

sell_matrix to_sell(const csr_matrix& a, int32_t C, int32_t sigma, int64_t max_elements) {
  check_sell_params(C, sigma);
  validate_csr(a);
  sell_matrix out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.C = C;
  out.sigma = sigma;
  out.num_slices = static_cast<int32_t>((int64_t{a.rows} + C - 1) / C);
  out.perm = sort_windows(a, sigma);
  out.slice_width = slice_widths(a, out.perm, C, out.num_slices);
  std::vector<int64_t> ptr(static_cast<size_t>(out.num_slices) + 1, 0);
  for (int32_t s = 0; s < out.num_slices; ++s)
    ptr[s + 1] = ptr[s] + int64_t{out.slice_width[s]} * C;
  detail::check_stored_elements(
      "SELL",
      detail::describe(a) + " with C = " + std::to_string(C) + ", sigma = " + std::to_string(sigma),
      ptr.back(), max_elements);
  out.slice_ptr.assign(ptr.begin(), ptr.end());  // fits: checked against the 32-bit limit above
  out.col_idx.resize(static_cast<size_t>(ptr.back()));
  out.values.resize(static_cast<size_t>(ptr.back()));
#pragma omp parallel for schedule(dynamic, 16) if (detail::parallel_worth(a.rows + ptr.back()))
  for (int32_t s = 0; s < out.num_slices; ++s) fill_slice(a, out, s);
  return out;
}

void spmv(const sell_matrix& a, const float* x, float* y) {
  check_sell_shape(a);
#pragma omp parallel if (detail::parallel_worth(int64_t{a.rows} + a.slice_ptr[a.num_slices]))
  {
    std::vector<double> acc(static_cast<size_t>(a.C));
#pragma omp for schedule(dynamic, 16)
    for (int32_t s = 0; s < a.num_slices; ++s) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int32_t j = 0; j < a.slice_width[s]; ++j) {
        const int64_t base = a.slice_ptr[s] + int64_t{j} * a.C;
        for (int32_t l = 0; l < a.C; ++l) {
          const int32_t col = a.col_idx[base + l];
          if (col >= 0)
            acc[l] += static_cast<double>(a.values[base + l]) * static_cast<double>(x[col]);
        }
      }
      const int64_t first = int64_t{s} * a.C;
      const int32_t lanes = static_cast<int32_t>(std::min<int64_t>(a.C, a.rows - first));
      for (int32_t l = 0; l < lanes; ++l) y[a.perm[first + l]] = static_cast<float>(acc[l]);
    }
  }
}

}  // namespace sparserl
