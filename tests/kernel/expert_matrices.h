#pragma once
// Small matrices covering the shapes every expert template must handle: empty, empty rows, one
// row, very long rows, rectangular, and the structural families the pruning rules look at.
#include <string>
#include <vector>

#include "sparse/csr_matrix.h"
#include "sparse/generators.h"

namespace sparserl::testing {

struct named_matrix {
  std::string name;
  csr_matrix matrix;
};

inline csr_matrix from_lengths(int32_t cols, const std::vector<int32_t>& lengths, uint32_t seed) {
  std::vector<triplet> t;
  uint32_t state = seed;
  auto next = [&state] { return state = state * 1664525u + 1013904223u; };
  for (size_t r = 0; r < lengths.size(); ++r)
    for (int32_t j = 0; j < lengths[r]; ++j) {
      const int32_t col = lengths[r] >= cols ? j : static_cast<int32_t>(next() % cols);
      const float value = static_cast<float>(next() % 2001) / 1000.0f - 1.0f;
      t.push_back({static_cast<int32_t>(r), col, value});
    }
  return csr_from_triplets(static_cast<int32_t>(lengths.size()), cols, std::move(t));
}

inline csr_matrix generated(const std::string& family, int32_t rows, int32_t block = 8) {
  generator_spec s;
  s.family = family;
  s.rows = rows;
  s.block = block;
  s.seed = 7;
  s.avg_degree = 12;
  s.density = 0.02;
  return generate_matrix(s);
}

// Edge cases first (cheap), then structured families.
inline std::vector<named_matrix> edge_matrices() {
  std::vector<int32_t> long_rows(300, 2);
  long_rows[0] = 5000;  // one row far longer than a block's share
  long_rows[150] = 0;
  long_rows[299] = 3000;
  std::vector<int32_t> gaps(97, 0);
  for (size_t r = 0; r < gaps.size(); r += 3) gaps[r] = static_cast<int32_t>(r % 11);
  return {
      {"empty_0x0", csr_from_triplets(0, 0, {})},
      {"no_nonzeros_5x7", csr_from_triplets(5, 7, {})},
      {"one_1x1", csr_from_triplets(1, 1, {{0, 0, 2.5f}})},
      {"one_row_1x300", from_lengths(300, {300}, 3)},
      {"long_rows_300x6000", from_lengths(6000, long_rows, 5)},
      {"empty_rows_97x40", from_lengths(40, gaps, 9)},
      {"tall_2000x3", from_lengths(3, std::vector<int32_t>(2000, 2), 11)},
  };
}

inline std::vector<named_matrix> family_matrices() {
  return {
      {"stencil2d", generated("stencil2d", 900)},
      {"banded", generated("banded", 500)},
      {"block_diagonal8", generated("block_diagonal", 512, 8)},
      {"fem", generated("fem", 600, 4)},
      {"random", generated("random", 700)},
      {"rmat", generated("rmat", 1024)},
      {"circuit", generated("circuit", 800)},
  };
}

}  // namespace sparserl::testing
