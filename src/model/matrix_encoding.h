#pragma once
// The sparse-matrix embedding the policy sees (after the SparseRL paper): a fixed number of tokens,
// one of global structural features and max_nnz of sinusoidal codes of sampled nonzeros (row,
// column, signed offset). The exact formulas, sampling strata and feature list are in
// docs/matrix-embedding.md; the projector that maps these tokens to decoder prefix embeddings is in
// model/matrix_projector.h. Torch-free.
#include <cstdint>
#include <utility>
#include <vector>

#include "sparse/csr_matrix.h"
#include "sparse/features.h"

namespace sparserl {

struct matrix_encoding_options {
  int max_nnz = 128;      // sampled nonzeros: every encoding has exactly 1 + max_nnz tokens
  int dim = 32;           // sinusoid width per component (even, >= 10); feature_dim = 3 * dim
  double base = 10000.0;  // frequency ratio: omega_k = (pi / 2) * base^(2k / dim), > 1
};

// Features of the global token (token 0), in order; the rest of that token is zeros.
constexpr int matrix_global_feature_count = 26;

struct matrix_encoding {
  int64_t tokens = 0;           // 1 + max_nnz
  int64_t feature_dim = 0;      // 3 * dim
  std::vector<float> features;  // row-major [tokens, feature_dim]
  // The sampled nonzeros (row, col), coords[i] encoded in token i + 1, sorted by (row, col) and
  // repeated cyclically when nnz < max_nnz; empty when the matrix has no nonzeros.
  std::vector<std::pair<int64_t, int64_t>> coords;
};

// Throws sparserl::error naming the first option out of range.
void validate_encoding_options(const matrix_encoding_options& options);

// Deterministic for a given matrix structure (the sampling seed is a hash of it; values are not
// read). Computes the global features with compute_features (one streaming pass over the
// nonzeros); the sampling itself costs O(rows + max_nnz log rows) and copies no nonzeros.
matrix_encoding encode_matrix(const csr_matrix& a, const matrix_encoding_options& options);

// The same with features already computed for `a` (e.g. cached in a dataset): O(rows + max_nnz
// log rows), no pass over the nonzeros. Throws when `features` describe another shape or nnz.
matrix_encoding encode_matrix(const csr_matrix& a, const matrix_features& features,
                              const matrix_encoding_options& options);

// sin / cos of x at the dim / 2 frequencies above, interleaved: out[2k] = sin(omega_k x),
// out[2k + 1] = cos(omega_k x). Exposed for the tests and the documentation's worked example.
void sinusoid(double x, const matrix_encoding_options& options, float* out);

}  // namespace sparserl
