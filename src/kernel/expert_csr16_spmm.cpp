// CSR16 SpMM: csr_rowgroup on CSR16 (a lane group per row and a k-tile per block column); the
// row of B each nonzero scales is col_base[row] + a 16-bit offset.
#include <algorithm>

#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"csr16_rowgroup",
          sparse_op::spmm,
          format_kind::csr16,
          "a lane group per row over 16-bit column offsets, k-tile per block column",
          {},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"group", {2, 8, 32}, "lanes per row (a power of two <= 32)"},
           {"tile", {8, 32, 64, 128, 256}, "columns of C per block (k_per_block)"},
           {"vec", {1, 4}, "floats per lane access (4 = float4)"}}};
}

const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kGroup = kBlock / SPARSERL_ROWS_PER_BLOCK;  // lanes per row
constexpr int kTile = SPARSERL_K_PER_BLOCK;  // columns of C per block
constexpr int kVec = @vec@;
constexpr int kSteps = kTile / (kGroup * kVec);
constexpr int kAcc = kSteps * kVec;  // accumulators per lane
constexpr int kRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;
@TILE@
extern "C" __global__ void spmm_csr16(@ARGS@) {
  const int lane = threadIdx.x % kGroup;
  const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kGroup;
  if (row >= rows) return;  // whole groups leave together
  const int col0 = blockIdx.y * kTile + lane * kVec;
  const int begin = row_ptr[row], end = row_ptr[row + 1];
  const float* __restrict__ b_rows = B + (size_t)col_base[row] * k;  // the row's first column
  float acc[kAcc] = {};
  float b[kAcc];
  for (int i = begin; i < end; ++i) {
    const float a = values[i];
    tile_load(b, b_rows + (size_t)col_offset[i] * k, col0, k);
#pragma unroll
    for (int q = 0; q < kAcc; ++q) acc[q] += a * b[q];
  }
  tile_store(acc, C + (size_t)row * k, col0, k);
}
)";

std::vector<expert_config> space(const matrix_features& f, int k) {
  // csr_rowgroup's tiles and groups, without its shuffle cache; only where CSR16 holds the matrix.
  std::vector<expert_config> out;
  if (f.row_span_max > 65535) return out;
  for (const auto& params : rowgroup_configs(k)) out.push_back(make_config(info(), {}, params));
  return out;
}

kernel_program emit(const expert_config& c) { return emit_rowgroup(c, format_kind::csr16, source); }

}  // namespace

family csr16_rowgroup_spmm() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
