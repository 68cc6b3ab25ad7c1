#pragma once
// Seeded synthetic matrices covering SuiteSparse's structural families.
#include <cstdint>
#include <functional>
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
  // Graph families (mesh2d, mesh3d, fem_mesh, knn, powerlaw, road): node numbering.
  std::string order = "natural";  // natural | random | rcm (reverse Cuthill-McKee)
  int32_t dims = 2;               // fem_mesh / knn: space dimension (2 or 3)
  int32_t dof = 3;                // fem_mesh: degrees of freedom per node (dense dof x dof blocks)
  int32_t neighbors = 16;         // knn: neighbours per point
  double exponent = 2.5;          // powerlaw: degree distribution exponent (> 2)
};

// The family registry: everything the CLI, the dataset builder, the corpus and the benches need
// to know about a family, so adding one is one generators_<family>.cpp plus a row here.
struct family_info {
  const char* name;
  const char* description;
  const char* counterpart;  // the real-world matrices it stands in for
  const char* parameters;   // which generator_spec fields it reads, ", "-separated
  csr_matrix (*generate)(const generator_spec&);
  // The family's own defaults on top of generator_spec's (e.g. stencil3d: 7 points).
  void (*defaults)(generator_spec&);
  // Draws the family's parameters for the dataset builder; pick(lo, hi) is uniform, inclusive.
  void (*vary)(generator_spec&, const std::function<int64_t(int64_t, int64_t)>& pick);
  bool graph;        // a realistic (graph) family, else a classic one (the two bench suites)
  bool takes_order;  // reads spec.order (natural / random / rcm)
};

const std::vector<family_info>& family_registry();
// Throws sparserl::error naming the known families.
const family_info& find_family(const std::string& name);
// Whether the family's generator reads this generator_spec field (one of its `parameters`).
bool family_reads(const family_info& f, const std::string& field);
std::vector<std::string> generator_families();
// The pre-registry families (non-graph) and the realistic graph families.
std::vector<std::string> classic_families();
std::vector<std::string> realistic_families();
// generator_spec with the family's defaults applied.
generator_spec default_spec(const std::string& family);
// Throws sparserl::error on an unknown family or parameters out of range.
csr_matrix generate_matrix(const generator_spec& spec);

}  // namespace sparserl
