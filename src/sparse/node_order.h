#pragma once
// Node numberings for the graph families: the order an application would have them in
// (natural), none at all (random), or bandwidth-reducing (reverse Cuthill-McKee).
#include <cstdint>
#include <string>
#include <vector>

#include "sparse/csr_matrix.h"

namespace sparserl {

// order[new position] = old node. The pattern must be square; RCM treats it as A + A^T.
std::vector<int32_t> reverse_cuthill_mckee_order(const csr_matrix& pattern);
std::vector<int32_t> random_order(int32_t nodes, uint64_t seed);
// "natural" gives the identity. Throws sparserl::error on an unknown name.
std::vector<int32_t> node_order(const std::string& name, const csr_matrix& pattern, uint64_t seed);
// The largest |row - col| over the nonzeros.
int64_t matrix_bandwidth(const csr_matrix& a);

}  // namespace sparserl
