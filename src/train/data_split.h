#pragma once
// Train/validation splits decided by a stable hash of what a record is (a matrix's structure, a
// document's path), never by its position: the same matrix lands in the same split in every
// dataset built from it, so no validation matrix is trained on under another name or order.
#include <cstdint>
#include <string>
#include <string_view>

#include "sparse/csr_matrix.h"

namespace sparserl::train {

// FNV-1a 64 of the bytes, then the splitmix64 finaliser (so every bit depends on every byte).
// Stable across machines and runs (std::hash is not).
uint64_t stable_hash(std::string_view bytes);
// The hash of a matrix's structure: shape, row_ptr and col_idx (values ignored: the kernel a
// matrix gets depends on where its nonzeros are, and the SFT data keeps no values).
uint64_t matrix_structure_hash(const csr_matrix& matrix);

// "val" for a fraction `val_fraction` of hashes (uniformly), else "train". Throws sparserl::error
// unless 0 <= val_fraction <= 1.
std::string split_of(uint64_t hash, double val_fraction);

}  // namespace sparserl::train
