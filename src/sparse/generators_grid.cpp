// Structured families: finite-difference stencils on regular grids, dense diagonal blocks and
// FEM-like block couplings on a triangulated node grid.
#include <algorithm>
#include <array>
#include <cmath>

#include "sparse/generators_detail.h"

namespace sparserl::gen {

namespace {

int32_t checked_grid_rows(const generator_spec& spec, int64_t side, int dims) {
  int64_t points = 1;
  for (int d = 0; d < dims; ++d) points *= side;
  if (side < 1 || points > INT32_MAX)
    fail(spec, "grid of side " + std::to_string(side) + " does not fit 32-bit row indices");
  return static_cast<int32_t>(points);
}

// Grid Laplacian on a side^dims grid in lexicographic order. `full` takes every neighbour of
// the 3^dims box (9 / 27 points), else only the axis neighbours (5 / 7 points). Classic
// weights: the centre holds the neighbour count, each neighbour -1. Offsets are listed in
// lexicographic order, which is ascending column order for a mixed-radix index.
csr_matrix stencil(int32_t side, int dims, bool full) {
  std::vector<std::array<int32_t, 3>> deltas;  // [0] is the slowest-varying axis
  for (int box = 0; box < (dims == 2 ? 9 : 27); ++box) {
    std::array<int32_t, 3> delta{0, 0, 0};
    for (int d = dims - 1, rest = box; d >= 0; --d, rest /= 3) delta[d] = rest % 3 - 1;
    const int moved = (delta[0] != 0) + (delta[1] != 0) + (delta[2] != 0);
    if (full || moved <= 1) deltas.push_back(delta);
  }
  const int32_t rows = static_cast<int32_t>(std::pow(side, dims) + 0.5);
  return build_rows(
      rows, rows,
      [side, dims, deltas](int32_t row, std::vector<int32_t>& cols, std::vector<float>& values) {
        int32_t coord[3] = {0, 0, 0};
        for (int d = dims - 1, rest = row; d >= 0; --d, rest /= side) coord[d] = rest % side;
        const size_t start = cols.size();
        size_t centre = 0;
        for (const auto& delta : deltas) {
          int64_t index = 0;
          bool inside = true;
          for (int d = 0; d < dims; ++d) {
            const int32_t c = coord[d] + delta[d];
            inside = inside && c >= 0 && c < side;
            index = index * side + c;
          }
          if (!inside) continue;
          if (index == row) centre = cols.size();
          cols.push_back(static_cast<int32_t>(index));
          values.push_back(-1.0f);
        }
        values[centre] = static_cast<float>(cols.size() - start - 1);
      });
}

// Half-open row range of dense block (or FEM node) k of size `block`, the last one truncated.
int32_t block_end(int64_t k, int32_t block, int32_t rows) {
  return static_cast<int32_t>(std::min<int64_t>(rows, (k + 1) * block));
}

void require_block(const generator_spec& spec) {
  if (spec.block < 1 || spec.block > spec.rows)
    fail(spec, "block must be in [1, rows=" + std::to_string(spec.rows) + "], got " +
                   std::to_string(spec.block));
}

}  // namespace

csr_matrix generate_stencil2d(const generator_spec& spec) {
  if (spec.cols != 0) fail(spec, "cols must be 0: the grid (side = round(sqrt(rows))) fixes it");
  if (spec.points != 5 && spec.points != 9)
    fail(spec, "points must be 5 or 9, got " + std::to_string(spec.points));
  const int64_t side = std::llround(std::sqrt(static_cast<double>(spec.rows)));
  check_nnz_estimate(spec.family,
                     static_cast<double>(checked_grid_rows(spec, side, 2)) * spec.points);
  return stencil(static_cast<int32_t>(side), 2, spec.points == 9);
}

csr_matrix generate_stencil3d(const generator_spec& spec) {
  if (spec.cols != 0) fail(spec, "cols must be 0: the grid (side = round(cbrt(rows))) fixes it");
  if (spec.points != 7 && spec.points != 27)
    fail(spec, "points must be 7 or 27, got " + std::to_string(spec.points));
  const int64_t side = std::llround(std::cbrt(static_cast<double>(spec.rows)));
  check_nnz_estimate(spec.family,
                     static_cast<double>(checked_grid_rows(spec, side, 3)) * spec.points);
  return stencil(static_cast<int32_t>(side), 3, spec.points == 27);
}

csr_matrix generate_block_diagonal(const generator_spec& spec) {
  require_square(spec);
  require_block(spec);
  check_nnz_estimate(spec.family, static_cast<double>(spec.rows) * spec.block);
  const generator_spec s = spec;
  return build_rows(s.rows, s.rows,
                    [s](int32_t row, std::vector<int32_t>& cols, std::vector<float>& values) {
                      rng g(s.seed, static_cast<uint64_t>(row));
                      const int32_t begin = row / s.block * s.block,
                                    end = block_end(row / s.block, s.block, s.rows);
                      for (int32_t c = begin; c < end; ++c) cols.push_back(c);
                      append_random_values(g, static_cast<size_t>(end - begin), values);
                    });
}

// Nodes of `block` unknowns each sit on a grid of width ceil(sqrt(nodes)), every square split
// into two triangles: a node couples with itself and 6 neighbours (linear triangle elements), and
// every coupling is a dense block x block block. Structurally symmetric. In natural order the last
// node may be partial (rows not a multiple of block); the other orders renumber whole nodes (as
// fem_mesh does: rows / block of them), keeping each node's unknowns together, so the blocks stay
// dense and aligned while their positions scatter (random) or stay banded (rcm).
csr_matrix generate_fem(const generator_spec& spec) {
  require_square(spec);
  require_block(spec);
  const generator_spec s = spec;
  const bool natural = s.order == "natural";
  const int64_t nodes = natural ? (int64_t{s.rows} + s.block - 1) / s.block : s.rows / s.block;
  check_nnz_estimate(spec.family, std::min<double>(7, nodes) * spec.rows * spec.block);
  const int64_t width = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(nodes))));
  // The node's neighbours in ascending order: (i-1, j-1), (i-1, j), (i, j-1), (i, j), (i, j+1),
  // (i+1, j), (i+1, j+1).
  auto neighbours = [nodes, width](int64_t node, const auto& visit) {
    constexpr int offsets[7][2] = {{-1, -1}, {-1, 0}, {0, -1}, {0, 0}, {0, 1}, {1, 0}, {1, 1}};
    const int64_t i = node / width, j = node % width;
    for (const auto& n : offsets) {
      const int64_t ni = i + n[0], nj = j + n[1], other = ni * width + nj;
      if (ni >= 0 && nj >= 0 && nj < width && other < nodes) visit(other);
    }
  };
  if (!natural) {
    const csr_matrix pattern =
        build_pattern(static_cast<int32_t>(nodes), [&](int32_t node, std::vector<int32_t>& out) {
          neighbours(node, [&out](int64_t other) { out.push_back(static_cast<int32_t>(other)); });
        });
    return finish_graph(spec, pattern, s.block);
  }
  return build_rows(
      s.rows, s.rows,
      [s, neighbours](int32_t row, std::vector<int32_t>& cols, std::vector<float>& values) {
        rng g(s.seed, static_cast<uint64_t>(row));
        const size_t start = cols.size();
        neighbours(row / s.block, [&](int64_t other) {
          for (int64_t c = other * s.block; c < block_end(other, s.block, s.rows); ++c)
            cols.push_back(static_cast<int32_t>(c));
        });
        append_random_values(g, cols.size() - start, values);
      });
}

}  // namespace sparserl::gen
