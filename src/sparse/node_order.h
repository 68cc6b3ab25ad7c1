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
// Hubs first: nodes by decreasing row length, equal lengths in index order (degree sorting, for
// power-law graphs whose ids are shuffled: the hubs' x entries, which most nonzeros read, end up
// together at the front). Any pattern; a symmetric renumbering needs a square one.
std::vector<int32_t> hubs_first_order(const csr_matrix& pattern);
// "natural" gives the identity. Throws sparserl::error on an unknown name.
std::vector<int32_t> node_order(const std::string& name, const csr_matrix& pattern, uint64_t seed);
// position[perm[p]] = p: where each old node went. Throws sparserl::error naming `what` unless
// perm is a permutation of 0..n-1.
std::vector<int32_t> inverse_permutation(const std::vector<int32_t>& perm, int32_t n,
                                         const char* what);
// The largest |row - col| over the nonzeros.
int64_t matrix_bandwidth(const csr_matrix& a);

}  // namespace sparserl
