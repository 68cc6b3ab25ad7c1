#include "sparse/features.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "sparse/block_shape.h"
#include "sparse/format_detail.h"
#include "sparse/node_order.h"

namespace sparserl {

namespace {

// Gini coefficient of the row lengths from their histogram (counting sort: O(rows + max)):
// G = 2 * sum(i * x_i) / (n * sum(x)) - (n + 1) / n over the ascending x_1..x_n.
double row_length_gini(const csr_matrix& a, int32_t max_length) {
  if (a.rows == 0 || a.nnz() == 0) return 0;
  std::vector<int64_t> histogram(static_cast<size_t>(max_length) + 1, 0);
  for (int32_t r = 0; r < a.rows; ++r) ++histogram[a.row_length(r)];
  long double weighted = 0;  // sum of i * x_i, 1-based i
  int64_t position = 0;
  for (int32_t length = 0; length <= max_length; ++length) {
    const int64_t count = histogram[length];
    if (count == 0) continue;
    // positions position+1 .. position+count all hold `length`
    const long double index_sum =
        static_cast<long double>(count) * position + 0.5L * count * (count + 1);
    weighted += index_sum * length;
    position += count;
  }
  const long double n = a.rows;
  const long double total = static_cast<long double>(a.nnz());
  return static_cast<double>(2 * weighted / (n * total) - (n + 1) / n);
}

void add_row_length_stats(const csr_matrix& a, matrix_features& f) {
  if (a.rows == 0) return;
  int64_t sum_squares = 0;  // exact: at most nnz * max length < 2^62
  f.row_length_min = a.row_length(0);
  for (int32_t r = 0; r < a.rows; ++r) {
    const int32_t length = a.row_length(r);
    f.row_length_min = std::min(f.row_length_min, length);
    f.row_length_max = std::max(f.row_length_max, length);
    f.empty_rows += length == 0;
    sum_squares += static_cast<int64_t>(length) * length;
  }
  f.row_length_mean = static_cast<double>(a.nnz()) / a.rows;
  const double variance =
      static_cast<double>(sum_squares) / a.rows - f.row_length_mean * f.row_length_mean;
  f.row_length_std = std::sqrt(std::max(0.0, variance));
  f.row_length_gini = row_length_gini(a, f.row_length_max);
}

// Cells of diagonal `offset` (= col - row) that lie inside the rows x cols matrix.
int64_t diagonal_length(int64_t rows, int64_t cols, int64_t offset) {
  return std::min(rows, cols - offset) - std::max<int64_t>(0, -offset);
}

// One bit per possible offset (rows + cols - 1 of them) instead of a hash set: O(nnz) and
// cache-friendly for the banded matrices where most nonzeros share few diagonals.
void add_diagonal_stats(const csr_matrix& a, matrix_features& f) {
  if (a.nnz() == 0) return;
  const int64_t offsets = int64_t{a.rows} + a.cols - 1;
  std::vector<uint64_t> seen(static_cast<size_t>((offsets + 63) / 64), 0);
  int64_t bandwidth = 0;
  for (int32_t r = 0; r < a.rows; ++r) {
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) {
      const int64_t offset = int64_t{a.col_idx[i]} - r;
      bandwidth = std::max(bandwidth, offset < 0 ? -offset : offset);
      const int64_t bit = offset + a.rows - 1;
      seen[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
  }
  int64_t cells = 0;
  for (size_t w = 0; w < seen.size(); ++w) {
    for (uint64_t word = seen[w]; word != 0; word &= word - 1) {
      const int64_t bit = static_cast<int64_t>(w) * 64 + __builtin_ctzll(word);
      ++f.diagonal_count;
      cells += diagonal_length(a.rows, a.cols, bit - (a.rows - 1));
    }
  }
  f.bandwidth = bandwidth;
  f.diagonal_fill = static_cast<double>(a.nnz()) / static_cast<double>(cells);
}

// Appends the distinct values of x >> 1 over two ascending lists, ascending.
void merge_halved(const int32_t* a, const int32_t* a_end, const int32_t* b, const int32_t* b_end,
                  std::vector<int32_t>& out) {
  const size_t start = out.size();
  auto emit = [&](int32_t v) {
    if (out.size() == start || out.back() != v) out.push_back(v);
  };
  while (a != a_end && b != b_end) emit((*a <= *b ? *a++ : *b++) >> 1);
  while (a != a_end) emit(*a++ >> 1);
  while (b != b_end) emit(*b++ >> 1);
}

// Nonzero aligned 2x2, 4x4 and 8x8 blocks in one linear pass, without sorting or hashing: in each
// group of 8 rows the sorted rows are merged pairwise three times, halving the column ids each
// time, so after level k every list holds the distinct block columns of one 2^k-row block row.
struct block_counts {
  int64_t of_2 = 0, of_4 = 0, of_8 = 0;
};

block_counts count_nonzero_blocks(const csr_matrix& a) {
  const int32_t groups = static_cast<int32_t>((int64_t{a.rows} + 7) / 8);
  int64_t of_2 = 0, of_4 = 0, of_8 = 0;
#pragma omp parallel reduction(+ : of_2, of_4, of_8)
  {
    std::vector<int32_t> level[3];
    size_t bounds[3][5];  // list i of a level spans [bounds[i], bounds[i + 1])
#pragma omp for schedule(dynamic, 256)
    for (int32_t g = 0; g < groups; ++g) {
      // Row r spans [row_start(r), row_start(r + 1)); rows past the end are empty.
      auto row_start = [&](int64_t r) {
        return a.col_idx.data() + a.row_ptr[static_cast<size_t>(std::min<int64_t>(r, a.rows))];
      };
      for (int k = 0; k < 3; ++k) {
        const int lists = 4 >> k;
        level[k].clear();
        bounds[k][0] = 0;
        for (int i = 0; i < lists; ++i) {
          if (k == 0) {
            const int64_t r = int64_t{g} * 8 + 2 * i;
            merge_halved(row_start(r), row_start(r + 1), row_start(r + 1), row_start(r + 2),
                         level[0]);
          } else {
            const int32_t* prev = level[k - 1].data();
            merge_halved(prev + bounds[k - 1][2 * i], prev + bounds[k - 1][2 * i + 1],
                         prev + bounds[k - 1][2 * i + 1], prev + bounds[k - 1][2 * i + 2],
                         level[k]);
          }
          bounds[k][i + 1] = level[k].size();
        }
      }
      of_2 += static_cast<int64_t>(level[0].size());
      of_4 += static_cast<int64_t>(level[1].size());
      of_8 += static_cast<int64_t>(level[2].size());
    }
  }
  return {of_2, of_4, of_8};
}

double block_fill(int64_t nnz, int64_t blocks, int32_t b) {
  return nnz == 0 ? 0 : static_cast<double>(nnz) / (static_cast<double>(blocks) * b * b);
}

// The column distance RCSR's matrix would have, from the RCM positions alone: building that matrix
// (rows gathered and re-sorted) cost a quarter of the features' time on a 4M-row road graph.
double renumbered_distance_mean(const csr_matrix& a, double own) {
  if (a.rows != a.cols || own <= random_order_distance) return own;
  const std::vector<int32_t> position =
      inverse_permutation(reverse_cuthill_mckee_order(a), a.rows, "renumbered distance");
  double sum = 0;  // integer distances below 2^53 in total: exact in any order
#pragma omp parallel for reduction(+ : sum) if (detail::parallel_worth(a.rows))
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e)
      sum += static_cast<double>(std::abs(int64_t{position[a.col_idx[e]]} - position[r]));
  const double mean = a.nnz() > 0 ? sum / static_cast<double>(a.nnz()) : 0.0;
  return mean / static_cast<double>(std::max(a.rows, 1));
}

double hub_share(const csr_matrix& a) {
  if (a.nnz() == 0) return 0;
  std::vector<int64_t> count(static_cast<size_t>(a.cols), 0);
  for (int32_t c : a.col_idx) ++count[c];
  const size_t hubs =
      std::min<size_t>(hub_columns, (count.size() + hub_column_fraction - 1) / hub_column_fraction);
  std::nth_element(count.begin(), count.begin() + static_cast<std::ptrdiff_t>(hubs), count.end(),
                   std::greater<int64_t>());
  int64_t in_hubs = 0;
  for (size_t i = 0; i < hubs; ++i) in_hubs += count[i];
  return static_cast<double>(in_hubs) / static_cast<double>(a.nnz());
}

}  // namespace

matrix_features compute_features(const csr_matrix& a) {
  matrix_features f;
  f.rows = a.rows;
  f.cols = a.cols;
  f.nnz = a.nnz();
  const double cells = static_cast<double>(a.rows) * a.cols;
  f.density = cells > 0 ? static_cast<double>(f.nnz) / cells : 0;
  add_row_length_stats(a, f);
  add_diagonal_stats(a, f);
  const block_counts blocks = count_nonzero_blocks(a);
  f.block_fill_2 = block_fill(f.nnz, blocks.of_2, 2);
  f.block_fill_4 = block_fill(f.nnz, blocks.of_4, 4);
  f.block_fill_8 = block_fill(f.nnz, blocks.of_8, 8);
  const block_shape shape = detect_block_shape(a);
  f.block_size = shape.size;
  f.block_size_fill = shape.fill;
  f.row_span_max = max_row_span(a);
  f.column_distance_mean =
      distance_from_diagonal(a).mean / static_cast<double>(std::max({a.rows, a.cols, 1}));
  f.renumbered_distance_mean = renumbered_distance_mean(a, f.column_distance_mean);
  f.hub_share = hub_share(a);
  // An empty matrix needs no padding: ratio 1 keeps "1 = no padding" true and avoids 0 / 0.
  f.ell_padding_ratio =
      f.nnz == 0 ? 1.0
                 : static_cast<double>(a.rows) * f.row_length_max / static_cast<double>(f.nnz);
  return f;
}

nlohmann::json features_to_json(const matrix_features& f) {
  return {{"rows", f.rows},
          {"cols", f.cols},
          {"nnz", f.nnz},
          {"density", f.density},
          {"row_length_mean", f.row_length_mean},
          {"row_length_std", f.row_length_std},
          {"row_length_gini", f.row_length_gini},
          {"row_length_min", f.row_length_min},
          {"row_length_max", f.row_length_max},
          {"empty_rows", f.empty_rows},
          {"bandwidth", f.bandwidth},
          {"diagonal_count", f.diagonal_count},
          {"diagonal_fill", f.diagonal_fill},
          {"block_fill_2", f.block_fill_2},
          {"block_fill_4", f.block_fill_4},
          {"block_fill_8", f.block_fill_8},
          {"ell_padding_ratio", f.ell_padding_ratio},
          {"block_size", f.block_size},
          {"block_size_fill", f.block_size_fill},
          {"row_span_max", f.row_span_max},
          {"column_distance_mean", f.column_distance_mean},
          {"renumbered_distance_mean", f.renumbered_distance_mean},
          {"hub_share", f.hub_share}};
}

}  // namespace sparserl
