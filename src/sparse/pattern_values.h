#pragma once
// The one rule for matrices given without values (Matrix Market `pattern` files, the reward
// service's requests without "values", training samples, which are patterns): each nonzero
// (r, c) gets hash(r, c) mapped to +-[0.5, 1). The same pattern always gives the same matrix
// (whatever the order of its entries), no value is near zero, and values differ from entry to
// entry: with all ones, a kernel that reads the wrong value (or none) would still pass.
#include <cstdint>

#include "sparse/csr_matrix.h"

namespace sparserl {

float pattern_value(int32_t row, int32_t col);

// Overwrites every value of `matrix` (whose row_ptr and col_idx are set) with pattern_value.
void fill_pattern_values(csr_matrix& matrix);

}  // namespace sparserl
