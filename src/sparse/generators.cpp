#include "sparse/generators.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "sparse/generators_detail.h"

namespace sparserl {

namespace {

using picker = std::function<int64_t(int64_t, int64_t)>;

void no_defaults(generator_spec&) {}
void no_variation(generator_spec&, const picker&) {}
void vary_order(generator_spec& s, const picker& pick) {
  static const char* const orders[] = {"natural", "random", "rcm"};
  s.order = orders[pick(0, 2)];
}

const std::vector<family_info> families = {
    {"stencil2d", "5- or 9-point stencil on a square grid", "2D finite differences (Poisson)",
     "rows, points", gen::generate_stencil2d, no_defaults,
     [](generator_spec& s, const picker& pick) { s.points = pick(0, 1) ? 9 : 5; }, false, false},
    {"stencil3d", "7- or 27-point stencil on a cube grid", "3D finite differences", "rows, points",
     gen::generate_stencil3d, [](generator_spec& s) { s.points = 7; },
     [](generator_spec& s, const picker& pick) { s.points = pick(0, 1) ? 27 : 7; }, false, false},
    {"banded", "random band of a given half-width", "1D discretisations, banded solvers",
     "rows, cols, bandwidth", gen::generate_banded, no_defaults,
     [](generator_spec& s, const picker& pick) { s.bandwidth = static_cast<int32_t>(pick(1, 16)); },
     false, false},
    {"block_diagonal", "dense blocks on the diagonal", "decoupled subsystems", "rows, block",
     gen::generate_block_diagonal, no_defaults,
     [](generator_spec& s, const picker& pick) {
       s.block = static_cast<int32_t>(int64_t{1} << pick(1, 3));
     },
     false, false},
    {"fem", "dense blocks along a banded block pattern", "structured FEM with block dofs",
     "rows, block, order", gen::generate_fem, no_defaults,
     [](generator_spec& s, const picker& pick) {
       s.block = static_cast<int32_t>(pick(1, 4));
       vary_order(s, pick);
     },
     false, true},
    {"random", "uniform random pattern", "no real structure (worst case)", "rows, cols, density",
     gen::generate_random, no_defaults, no_variation, false, false},
    {"rmat", "R-MAT recursive graph", "web and social graphs (Graph500)",
     "rows, avg_degree, rmat_a/b/c", gen::generate_rmat, no_defaults, no_variation, false, false},
    {"circuit", "sparse rows plus a few dense rows and columns", "circuit simulation (power rails)",
     "rows, avg_degree, dense_rows", gen::generate_circuit, no_defaults, no_variation, false,
     false},
    {"lp", "rectangular random rows of varied length", "linear programming constraints",
     "rows, cols, avg_degree", gen::generate_lp, no_defaults, no_variation, false, false},
    // The realistic (graph) families: every one takes spec.order.
    {"mesh2d", "triangle mesh: lattice with a random diagonal per square, ~7/row",
     "2D unstructured FEM/FV meshes (Laplacians, CFD)", "rows, order", gen::generate_mesh2d,
     no_defaults, vary_order, true, true},
    {"mesh3d", "tetrahedral-like mesh: random face and body diagonals, ~15/row",
     "3D unstructured FEM/FV meshes", "rows, order", gen::generate_mesh3d, no_defaults, vary_order,
     true, true},
    {"fem_mesh", "mesh2d/mesh3d with dense dof x dof blocks per node pair",
     "FEM with several unknowns per node (elasticity 2-3, shells 6)", "rows, dims, dof, order",
     gen::generate_fem_mesh, no_defaults,
     [](generator_spec& s, const picker& pick) {
       vary_order(s, pick);
       s.dims = static_cast<int32_t>(pick(2, 3));
       s.dof = static_cast<int32_t>(pick(1, 6));
     },
     true, true},
    {"knn", "k nearest neighbours of uniform points, k per row",
     "point clouds, manifold learning, GNN graphs", "rows, dims, neighbors, order",
     gen::generate_knn, no_defaults,
     [](generator_spec& s, const picker& pick) {
       vary_order(s, pick);
       s.dims = static_cast<int32_t>(pick(2, 3));
       // Half of them short (2-4 a row, sparse kNN graphs): rows under 5, where gathering x
       // into a local order (RCSR) no longer pays, in every node order.
       const int64_t neighbors = pick(0, 1) ? pick(2, 4) : pick(5, 32);
       s.neighbors = static_cast<int32_t>(std::min<int64_t>(s.rows - 1, neighbors));
     },
     true, true},
    {"knn_sym", "knn made symmetric (i ~ j when either is among the other's k nearest)",
     "spectral clustering and point-cloud Laplacians", "rows, dims, neighbors, order",
     gen::generate_knn_sym, [](generator_spec& s) { s.neighbors = 3; },
     // Short rows (k..~2k with k = 2..4: uneven, 2-8 a row), where RCSR's gather does not pay.
     [](generator_spec& s, const picker& pick) {
       vary_order(s, pick);
       s.dims = static_cast<int32_t>(pick(2, 3));
       s.neighbors = static_cast<int32_t>(std::min<int64_t>(s.rows - 1, pick(2, 4)));
     },
     true, true},
    {"powerlaw", "Chung-Lu graph with a power-law degree distribution",
     "social networks, web crawls, citation graphs", "rows, avg_degree, exponent, order",
     gen::generate_powerlaw, no_defaults,
     [](generator_spec& s, const picker& pick) {
       vary_order(s, pick);
       s.exponent = 2.1 + 0.1 * static_cast<double>(pick(0, 9));
     },
     true, true},
    {"road", "lattice keeping 70% of its edges: planar, degree ~2.8, long diameter",
     "road networks, power grids", "rows, order", gen::generate_road, no_defaults, vary_order, true,
     true},
};

std::string family_list() {
  std::string list;
  for (const family_info& f : families) list += (list.empty() ? "" : ", ") + std::string(f.name);
  return list;
}

}  // namespace

const std::vector<family_info>& family_registry() { return families; }

const family_info& find_family(const std::string& name) {
  for (const family_info& f : families)
    if (name == f.name) return f;
  throw error("unknown generator family '" + name + "': expected one of " + family_list());
}

bool family_reads(const family_info& f, const std::string& field) {
  const std::string fields = std::string(", ") + f.parameters + ",";
  return fields.find(", " + field + ",") != std::string::npos;
}

std::vector<std::string> generator_families() {
  std::vector<std::string> names;
  for (const family_info& f : families) names.emplace_back(f.name);
  return names;
}

std::vector<std::string> classic_families() {
  std::vector<std::string> names;
  for (const family_info& f : families)
    if (!f.graph) names.emplace_back(f.name);
  return names;
}

std::vector<std::string> realistic_families() {
  std::vector<std::string> names;
  for (const family_info& f : families)
    if (f.graph) names.emplace_back(f.name);
  return names;
}

generator_spec default_spec(const std::string& family) {
  const family_info& f = find_family(family);
  generator_spec s;
  s.family = family;
  f.defaults(s);
  return s;
}

csr_matrix generate_matrix(const generator_spec& spec) {
  const family_info& f = find_family(spec.family);
  if (spec.rows < 1) gen::fail(spec, "rows must be >= 1, got " + std::to_string(spec.rows));
  if (spec.cols < 0)
    gen::fail(spec, "cols must be >= 0 (0 = square), got " + std::to_string(spec.cols));
  if (!f.takes_order && spec.order != "natural")
    gen::fail(spec, "order '" + spec.order + "' applies to the graph families and fem only");
  return f.generate(spec);
}

namespace gen {

void fail(const generator_spec& spec, const std::string& why) {
  throw error("generator '" + spec.family + "': " + why);
}

void require_square(const generator_spec& spec) {
  if (spec.cols != 0 && spec.cols != spec.rows)
    fail(spec, "makes square matrices only: cols must be 0 or equal rows (" +
                   std::to_string(spec.rows) + "), got " + std::to_string(spec.cols));
}

void check_nnz_estimate(const std::string& family, double estimated_nnz) {
  if (!(estimated_nnz <= static_cast<double>(INT32_MAX))) {
    char amount[32];
    std::snprintf(amount, sizeof amount, "%.3g", estimated_nnz);
    throw error("generator '" + family + "': parameters ask for about " + amount +
                " nonzeros, more than the 32-bit ABI's 2^31-1");
  }
}

}  // namespace gen

}  // namespace sparserl
