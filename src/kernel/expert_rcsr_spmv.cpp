// RCSR SpMV: the matrix renumbered symmetrically (B = P A P^T). A gather entry copies x into the
// new numbering (work[p] = x[perm[p]], a thread per position: perm and work coalesced, x read at
// random once per row), then csr_vector on B (a power-of-two lane group per row, shuffle
// reduction) reads work instead of x at random, and writes y[perm[row]]. lanes = 1 is a thread
// per row. Two templates, one per numbering: rcsr_vector (reverse Cuthill-McKee: the columns of a
// row near the row, for meshes and kNN graphs in random order) and rcsr_hubs_vector (hubs first:
// the few x entries most nonzeros read together at the front, and rows of like length side by
// side, for power-law graphs with shuffled ids, where no local order exists).
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"rcsr_vector",
          sparse_op::spmv,
          format_kind::rcsr,
          "x gathered into the RCM numbering, then a group of `lanes` threads per row of the "
          "reordered matrix, shuffle reduction",
          {},
          {{"block", {128, 256}, "threads per block of both entries (a multiple of 32)"},
           {"lanes", {1, 2, 4, 8, 16, 32}, "threads per row (a power of two <= 32)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kLanes = kBlock / SPARSERL_SPMV_RCSR_ROWS_PER_BLOCK;  // threads per row
constexpr int kRowsPerBlock = SPARSERL_SPMV_RCSR_ROWS_PER_BLOCK;

// x in the new numbering: work[p] = x[perm[p]], a thread per position.
extern "C" __global__ void spmv_rcsr_gather(@ARGS@) {
  const long long p = (long long)blockIdx.x * kBlock + threadIdx.x;
  if (p < rows) work[p] = __ldg(&x[perm[p]]);
}

// y = A x as B work, row p of B being original row perm[p]: its columns are near p.
extern "C" __global__ void spmv_rcsr(@ARGS@) {
  const int lane = threadIdx.x & (kLanes - 1);
  const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kLanes;
  float sum = 0.0f;
  if (row < rows) {
    const int end = row_ptr[row + 1];
    // work was written by the previous launch and is only read here: the read-only path is safe.
    for (int i = row_ptr[row] + lane; i < end; i += kLanes)
      sum += values[i] * __ldg(&work[col_idx[i]]);
  }
  // No thread returned early, so every lane of the warp takes part in the shuffles.
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset, kLanes);
  if (lane == 0 && row < rows) y[perm[row]] = sum;
}
)";

expert_template hubs_info() {
  expert_template t = info();
  t.name = "rcsr_hubs_vector";
  t.summary =
      "x gathered into the hubs-first numbering, then a group of `lanes` threads per row of the "
      "reordered matrix, shuffle reduction";
  t.format_params = {{"hubs_first", {1}, "1: nodes by decreasing degree"}};
  return t;
}

std::vector<expert_config> space(const matrix_features& f, int) {
  // The lane counts as csr16_vector's.
  if (!rcsr_order_pays(f)) return {};
  return lanes_per_row_space(info(), f, {1, 2, 4, 8, 16, 32});
}

// Hubs first pays where the order is random and a few rows are far longer than the mean (a
// power-law degree sequence); on rows of like length a degree sort is just another shuffle.
constexpr double hub_row_factor = 8;

std::vector<expert_config> hubs_space(const matrix_features& f, int) {
  if (!rcsr_order_pays(f) || f.row_length_max < hub_row_factor * f.row_length_mean) return {};
  std::vector<expert_config> out = lanes_per_row_space(hubs_info(), f, {1, 2, 4, 8, 16, 32});
  for (expert_config& c : out) c.format_params = {{"hubs_first", 1}};
  return out;
}

kernel_program emit(const expert_config& c) {
  // csr_vector's checks and source filling, with the gather launched before the product.
  kernel_program p = emit_lanes_per_row(c, format_kind::rcsr, source);
  const int64_t block = c.param("block");
  p.launches = {rows_launch("spmv_rcsr_gather", block, block),
                rows_launch("spmv_rcsr", block, block / c.param("lanes"))};
  return p;
}

}  // namespace

family rcsr_vector_spmv() { return {info(), space, emit}; }
family rcsr_hubs_vector_spmv() { return {hubs_info(), hubs_space, emit}; }

}  // namespace sparserl::expert_detail
