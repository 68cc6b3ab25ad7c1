#pragma once
// Structural features of a matrix: they drive format choice, the heuristic and datasets.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>

#include "sparse/csr_matrix.h"

namespace sparserl {

struct matrix_features {
  int32_t rows = 0, cols = 0;
  int64_t nnz = 0;
  double density = 0;
  double row_length_mean = 0, row_length_std = 0, row_length_gini = 0;
  int32_t row_length_min = 0, row_length_max = 0;
  int32_t empty_rows = 0;
  int64_t bandwidth = 0;       // max |col - row| over the nonzeros
  int64_t diagonal_count = 0;  // distinct col - row values
  double diagonal_fill = 0;    // nnz / (cells those diagonals cover inside the matrix)
  double block_fill_2 = 0, block_fill_4 = 0, block_fill_8 = 0;  // nnz / (nonzero blocks * b * b)
  double ell_padding_ratio = 0;  // rows * max row length / nnz (1 = no padding)
  // The square block size of the structure (sparse/block_shape.h: 3 for 3-dof FEM; 1 = none)
  // and the fill of its aligned blocks.
  int32_t block_size = 1;
  double block_size_fill = 0;
  int64_t row_span_max = 0;  // widest last - first column of a row (CSR16 needs <= 65535)
  // Mean over the nonzeros of |col - row| / max(rows, cols) (0 when empty): how far x accesses
  // stray from the diagonal. Near 0 for banded / RCM-ordered matrices, about 1/3 for a random
  // node order (what RCSR's renumbering fixes).
  double column_distance_mean = 0;
  // The same after RCSR's renumbering (reverse Cuthill-McKee): whether a local order exists. Only
  // computed for a square matrix whose order looks random (column_distance_mean above
  // random_order_distance), as the renumbering costs about a copy of the matrix; elsewhere it
  // equals column_distance_mean. A mesh or kNN graph numbered at random drops from ~1/3 to below
  // 1%; an Erdos-Renyi or power-law graph has no local order to find and stays far.
  double renumbered_distance_mean = 0;
  // The share of the nonzeros in the most referenced columns, as many as a hub table holds
  // (hub_columns) but at most one in 80 (0 when empty): how concentrated x's traffic is, and on
  // large matrices how much of it HCOO's table of those columns' x in shared memory serves.
  // About 0.27 on the realistic suite's power-law graphs (1M columns), ~0.01 on meshes.
  double hub_share = 0;
};

// The hub count hub_share measures on large matrices (48 KiB of floats: what one block's shared
// memory holds without an opt-in).
inline constexpr int32_t hub_columns = 12288;
// At most this share of the columns counts as hubs (so the share means concentration on small
// matrices too, and equals the hub table's share from about a million columns on).
inline constexpr int32_t hub_column_fraction = 80;

// column_distance_mean above this reads as a random node order (a shuffle gives ~1/3).
inline constexpr double random_order_distance = 0.1;

// A random order that hides a local one: reverse Cuthill-McKee brings the mean column distance
// down by more than 8x (a mesh or kNN graph numbered at random; not a power-law graph).
inline bool renumbering_finds_local_order(const matrix_features& f) {
  return f.renumbered_distance_mean * 8 < f.column_distance_mean;
}

matrix_features compute_features(const csr_matrix& a);
nlohmann::json features_to_json(const matrix_features& f);

}  // namespace sparserl
