// HCOO SpMV: coo4's kernel (four consecutive entries a lane, lane runs joined by one warp
// segmented scan; coo_segment) over a fixed grid of blocks that each copy the hubs' x into shared
// memory once and then take chunks grid-stride, so that entries in hub columns read shared
// memory instead of gathering x through L2. spmv_hcoo_init zeroes y and gathers the hubs' x into
// the scratch buffer.
#include <algorithm>

#include "kernel/expert_library.h"
#include "sparse/formats.h"

namespace sparserl::expert_detail {
namespace {

// The multiprocessors of an H100 or H200: the grid is a whole number of waves of them.
constexpr int64_t multiprocessors = 132;
static_assert(4 * hub_columns == hub_coo_matrix::max_hubs,
              "the largest table is the format's limit");

expert_template info() {
  return {
      "hcoo",
      sparse_op::spmv,
      format_kind::hcoo,
      "zero y and gather the hubs' x, then persistent blocks copy it into shared memory and "
      "scan 128-entry steps four entries a lane (coo4), hub entries read from shared memory",
      {{"hubs", {12288, 24576, 49152}, "hub columns (4 bytes of shared memory each)"}},
      {{"block", {512}, "threads per block of spmv_hcoo (a multiple of 32)"},
       {"grid", {132, 264, 528}, "blocks of spmv_hcoo: the blocks a multiprocessor holds x 132"},
       {"steps", {1, 2}, "128-entry steps per warp chunk"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_SPMV_HCOO_BLOCK;  // spmv_hcoo's LAUNCH block
constexpr int kSteps = @STEPS@;  // 128-entry steps per warp chunk
constexpr int kInitBlock = 256;

extern "C" __global__ void spmv_hcoo_init(@ARGS@) {
  const long long i = (long long)blockIdx.x * kInitBlock + threadIdx.x;
  if (i < rows) y[i] = 0.0f;
  for (long long h = i; h < num_hubs; h += (long long)gridDim.x * kInitBlock)
    work[h] = __ldg(&x[hub_cols[h]]);
}
@SEGMENT@)";

// The kernel's first lines: the hubs' x from work into shared memory (16-byte copies, then the
// tail), and x_of reading hub columns (~slot) there.
const char* const hub_x_of = R"(  extern __shared__ float4 hub_x4[];  // SPARSERL_HUBS floats
  float* const hub_x = reinterpret_cast<float*>(hub_x4);
  for (int i = threadIdx.x; i < num_hubs / 4; i += kBlock)
    hub_x4[i] = reinterpret_cast<const float4*>(work)[i];
  for (int i = num_hubs / 4 * 4 + threadIdx.x; i < num_hubs; i += kBlock) hub_x[i] = work[i];
  __syncthreads();
  const auto x_of = [&](int c) { return c < 0 ? hub_x[~c] : __ldg(&x[c]); };)";

// Offered where a few columns hold a real share of the nonzeros (power-law and R-MAT graphs;
// meshes, FEM and banded matrices spread them over all columns). Larger tables only where x has
// more columns than the smallest holds.
std::vector<expert_config> space(const matrix_features& f, int) {
  std::vector<expert_config> out;
  if (f.nnz == 0 || f.hub_share < 0.1) return out;
  for (int64_t hubs : {hub_columns, 2 * hub_columns, 4 * hub_columns}) {
    if (hubs > hub_columns && f.cols <= hub_columns) break;
    for (int64_t steps : {1, 2})
      out.push_back(make_config(info(), {{"hubs", hubs}},
                                {{"block", 512}, {"grid", hcoo_grid(hubs)}, {"steps", steps}}));
  }
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), grid = c.param("grid"), steps = c.param("steps");
  const int64_t hubs = c.format_param("hubs");
  require_block(c, block);
  require(grid >= 1 && grid <= 65535, c, "grid must be 1..65535");
  require(steps >= 1 && steps <= 256, c, "steps must be 1..256");
  require(hubs >= 0 && hubs <= hub_coo_matrix::max_hubs, c,
          "hubs must be 0.." + std::to_string(hub_coo_matrix::max_hubs));
  const std::string args = entry_args(sparse_op::spmv, format_kind::hcoo);
  std::map<std::string, std::string> values;
  values["ARGS"] = args;
  values["STEPS"] = std::to_string(steps);
  values["SEGMENT"] = coo_segment(4, "spmv_hcoo", args, "", hub_x_of);
  // A fixed grid (the blocks stay resident and take chunks grid-stride) with the table's bytes of
  // dynamic shared memory.
  launch_spec main;
  main.entry = "spmv_hcoo";
  main.block = static_cast<int32_t>(block);
  main.grid = grid;
  main.shared_bytes = static_cast<int32_t>(std::max<int64_t>(4 * hubs, 16));
  kernel_program p;
  p.launches = {rows_launch("spmv_hcoo_init", 256, 256), main};
  p.source = fill(source, values);
  return p;
}

}  // namespace

int64_t hcoo_grid(int64_t hubs) {
  // The blocks a multiprocessor holds: 4 of 512 threads, fewer where their shared x does not fit
  // (228 KiB a multiprocessor, 1 KiB of it reserved a block).
  const int64_t per_sm = std::min<int64_t>(4, (228 * 1024) / (hubs * 4 + 1024));
  return per_sm * multiprocessors;
}

family hcoo_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
