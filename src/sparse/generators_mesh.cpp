// Unstructured-looking meshes without a triangulator: a lattice whose cells are cut along a
// random diagonal. 2D: every square gets one of its two diagonals, giving the vertex-vertex
// graph of a triangle mesh (6 neighbours on average, 7 per row with the diagonal; degrees
// range 4..8 like a Delaunay mesh of jittered points). 3D: every square face gets a random
// diagonal and every cube a random body diagonal, a tetrahedral-like neighbourhood with 14
// neighbours on average (15 per row). The approximation keeps what SpMV sees (row lengths and
// their spread, locality in natural order) but not a true mesh's geometry or element quality.
#include <algorithm>
#include <cmath>

#include "sparse/generators_detail.h"

namespace sparserl::gen {

namespace {

// A seeded coin per (kind, cell): shared by every node that touches the cell, so the pattern
// is symmetric without any communication between rows.
uint64_t cell_hash(uint64_t seed, uint64_t kind, uint64_t cell) {
  uint64_t state = seed ^ (kind * 0x9e3779b97f4a7c15ULL) ^ (cell * 0xd1b54a32d192ed03ULL);
  splitmix64(state);
  return splitmix64(state);
}

int32_t side_for(const generator_spec& spec, int64_t nodes, int dims) {
  // At least 2 per side: rows is approximate for meshes anyway (a whole lattice).
  const double side = std::round(std::pow(static_cast<double>(nodes), 1.0 / dims));
  if (side > 1e6) fail(spec, "too many nodes");
  return std::max(2, static_cast<int32_t>(side));
}

// The diagonals of the squares around node (p, q) of an n x n lattice plane whose square
// (cp, cq) is cut by diagonal flip(cp, cq) & 1 (0: (0,0)-(1,1), 1: (1,0)-(0,1)).
template <typename Flip, typename Emit>
void plane_diagonals(int64_t p, int64_t q, int64_t n, Flip flip, Emit emit) {
  if (p > 0 && q > 0 && (flip(p - 1, q - 1) & 1) == 0) emit(-1, -1);
  if (p > 0 && q + 1 < n && (flip(p - 1, q) & 1) == 1) emit(-1, +1);
  if (p + 1 < n && q > 0 && (flip(p, q - 1) & 1) == 1) emit(+1, -1);
  if (p + 1 < n && q + 1 < n && (flip(p, q) & 1) == 0) emit(+1, +1);
}

}  // namespace

csr_matrix mesh2d_pattern(const generator_spec& spec, int64_t nodes) {
  const int64_t n = side_for(spec, nodes, 2);
  check_nnz_estimate(spec.family, 7.0 * n * n);
  return build_pattern(static_cast<int32_t>(n * n), [&](int32_t node, std::vector<int32_t>& out) {
    const int64_t i = node / n, j = node % n;
    auto add = [&](int64_t di, int64_t dj) { out.push_back(int32_t((i + di) * n + j + dj)); };
    add(0, 0);
    if (i > 0) add(-1, 0);
    if (i + 1 < n) add(1, 0);
    if (j > 0) add(0, -1);
    if (j + 1 < n) add(0, 1);
    plane_diagonals(
        i, j, n, [&](int64_t a, int64_t b) { return cell_hash(spec.seed, 0, a * n + b); }, add);
  });
}

csr_matrix mesh3d_pattern(const generator_spec& spec, int64_t nodes) {
  const int64_t n = side_for(spec, nodes, 3);
  check_nnz_estimate(spec.family, 15.0 * n * n * n);
  return build_pattern(
      static_cast<int32_t>(n * n * n), [&](int32_t node, std::vector<int32_t>& out) {
        const int64_t x[3] = {node / (n * n), (node / n) % n, node % n};
        auto add = [&](int64_t dx, int64_t dy, int64_t dz) {
          out.push_back(int32_t(((x[0] + dx) * n + x[1] + dy) * n + x[2] + dz));
        };
        add(0, 0, 0);
        for (int axis = 0; axis < 3; ++axis) {
          int64_t d[3] = {0, 0, 0};
          if (x[axis] > 0) d[axis] = -1, add(d[0], d[1], d[2]);
          if (x[axis] + 1 < n) d[axis] = +1, add(d[0], d[1], d[2]);
        }
        // Face diagonals: in the plane normal to `axis`, over the other two coordinates.
        for (int axis = 0; axis < 3; ++axis) {
          const int u = (axis + 1) % 3, v = (axis + 2) % 3;
          auto flip = [&](int64_t a, int64_t b) {
            // The face is identified by its lower corner: (a, b) in the plane, x[axis] across.
            int64_t c[3];
            c[axis] = x[axis], c[u] = a, c[v] = b;
            return cell_hash(spec.seed, 1 + axis, (c[0] * n + c[1]) * n + c[2]);
          };
          plane_diagonals(x[u], x[v], n, flip, [&](int64_t du, int64_t dv) {
            int64_t d[3];
            d[axis] = 0, d[u] = du, d[v] = dv;
            add(d[0], d[1], d[2]);
          });
        }
        // Body diagonals: the node is corner o of cube x - o; the cube's diagonal (one of the
        // four corner pairs o, 1 - o) is drawn per cube.
        for (int o = 0; o < 8; ++o) {
          const int64_t ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
          const int64_t cx = x[0] - ox, cy = x[1] - oy, cz = x[2] - oz;
          if (cx < 0 || cy < 0 || cz < 0 || cx + 1 >= n || cy + 1 >= n || cz + 1 >= n) continue;
          const int pair =
              ox ? static_cast<int>(((oy ^ 1) << 1) | (oz ^ 1)) : static_cast<int>((oy << 1) | oz);
          if (static_cast<int>(cell_hash(spec.seed, 4, (cx * n + cy) * n + cz) & 3) == pair)
            add(1 - 2 * ox, 1 - 2 * oy, 1 - 2 * oz);
        }
      });
}

csr_matrix generate_mesh2d(const generator_spec& spec) {
  require_square(spec);
  return finish_graph(spec, mesh2d_pattern(spec, spec.rows), 1);
}

csr_matrix generate_mesh3d(const generator_spec& spec) {
  require_square(spec);
  return finish_graph(spec, mesh3d_pattern(spec, spec.rows), 1);
}

// FEM with dof unknowns per mesh node: every mesh edge couples all unknowns of its two nodes,
// a dense dof x dof block (elasticity: 2 or 3, shells: 6).
csr_matrix generate_fem_mesh(const generator_spec& spec) {
  require_square(spec);
  if (spec.dof < 1 || spec.dof > 6) fail(spec, "dof must be 1..6, got " + std::to_string(spec.dof));
  if (spec.dims != 2 && spec.dims != 3)
    fail(spec, "dims must be 2 or 3, got " + std::to_string(spec.dims));
  const int64_t nodes = std::max<int64_t>(1, spec.rows / spec.dof);
  const csr_matrix pattern =
      spec.dims == 2 ? mesh2d_pattern(spec, nodes) : mesh3d_pattern(spec, nodes);
  return finish_graph(spec, pattern, spec.dof);
}

}  // namespace sparserl::gen
