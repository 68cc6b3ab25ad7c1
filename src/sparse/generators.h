#pragma once
// Seeded synthetic matrices covering SuiteSparse's structural families.
#include <cstdint>
#include <string>
#include <vector>

#include "sparse/csr_matrix.h"

namespace sparserl {

struct generator_spec {
  std::string family;   // one of generator_families()
  int32_t rows = 1000;  // rows (stencils: grid points per side are derived from rows)
  int32_t cols = 0;     // 0 = square
  uint64_t seed = 1;
  int32_t points = 5;                                  // stencil points: 5, 9 (2D), 7, 27 (3D)
  int32_t bandwidth = 16;                              // banded: half-width of the band
  int32_t block = 8;                                   // block_diagonal / fem: dense block size
  double density = 1e-3;                               // random / lp: fraction of nonzeros
  double avg_degree = 16;                              // rmat / circuit / lp: mean nonzeros per row
  double rmat_a = 0.57, rmat_b = 0.19, rmat_c = 0.19;  // R-MAT quadrant probabilities (d = rest)
  int32_t dense_rows = 4;  // circuit: number of very dense rows and columns
};

std::vector<std::string> generator_families();
// Throws sparserl::error on an unknown family or parameters out of range.
csr_matrix generate_matrix(const generator_spec& spec);

}  // namespace sparserl
