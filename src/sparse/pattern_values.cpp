#include "sparse/pattern_values.h"

namespace sparserl {

float pattern_value(int32_t row, int32_t col) {
  uint64_t z =
      (static_cast<uint64_t>(static_cast<uint32_t>(row)) << 32) | static_cast<uint32_t>(col);
  z += 0x9e3779b97f4a7c15ull;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const float magnitude = 0.5f + static_cast<float>(z >> 40) * 0x1.0p-25f;  // [0.5, 1)
  return (z & 1) ? -magnitude : magnitude;
}

void fill_pattern_values(csr_matrix& matrix) {
  matrix.values.resize(matrix.col_idx.size());
  for (int32_t r = 0; r < matrix.rows; ++r)
    for (int32_t i = matrix.row_ptr[r]; i < matrix.row_ptr[r + 1]; ++i)
      matrix.values[i] = pattern_value(r, matrix.col_idx[i]);
}

}  // namespace sparserl
