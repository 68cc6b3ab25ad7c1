// BSR SpMV: a group of `group` lanes per block row, laid out as block slots x r rows, with the
// largest power of two of slots that fits (group / r rounded down; lanes past slots x r idle, so
// r need not be a power of two: 3x3 and 6x6 FEM blocks). Slot s takes every slots-th block; lane
// (s, i) dots row i of each of its blocks with the c-wide piece of x (16-byte loads when c % 4 == 0
// and the piece is inside x), then the slots are summed with shuffles. Blocks on the last block
// column may reach past the matrix: those columns are skipped (their cells are 0), x is never read
// out of bounds.
#include "kernel/expert_library.h"

namespace sparserl::expert_detail {
namespace {

expert_template info() {
  return {"bsr",
          sparse_op::spmv,
          format_kind::bsr,
          "group lanes per block row = slots x r rows; block-row dot products, shuffle sum "
          "over slots",
          {{"r", {2, 3, 4, 6, 8}, "block rows (1..32)"}, {"c", {2, 4, 8}, "block columns (1..64)"}},
          {{"block", {128, 256}, "threads per block (a multiple of 32)"},
           {"group", {2, 4, 8, 16, 32}, "lanes per block row (a power of two, r <= group <= 32)"}}};
}

// One text for every block shape: kC % 4 == 0 is a constant, so the compiler keeps one branch.
// (With one text for 4x4 blocks and another for 3x3, SFT policies wrote the 16-byte loads under a
// 3x3 FORMAT line: misaligned on the H200, 2026-12-05.)
const char* const source = R"(
constexpr int kBlock = SPARSERL_BLOCK;  // threads per block, as in the LAUNCH line
constexpr int kR = SPARSERL_BLOCK_R, kC = SPARSERL_BLOCK_C;  // block shape, as in the FORMAT line
constexpr int kGroup = kBlock / SPARSERL_ROWS_PER_BLOCK;  // lanes per block row
// block slots: the largest power of two with slots x kR <= kGroup
constexpr int slots_from(int s) { return 2 * s * kR <= kGroup ? slots_from(2 * s) : s; }
constexpr int kSlots = slots_from(1);
constexpr int kBlockRowsPerBlock = SPARSERL_ROWS_PER_BLOCK;

extern "C" __global__ void spmv_bsr(@ARGS@) {
  const int lane = threadIdx.x % kGroup;
  const int slot = lane / kR, i = lane % kR;
  const long long br = (long long)blockIdx.x * kBlockRowsPerBlock + threadIdx.x / kGroup;
  float sum = 0.0f;
  if (br < block_rows && slot < kSlots) {  // lanes past kSlots * kR idle
    const int end = block_row_ptr[br + 1];
    for (int b = block_row_ptr[br] + slot; b < end; b += kSlots) {
      const int col0 = block_col_idx[b] * kC;
      const float* __restrict__ v = values + ((size_t)b * kR + i) * kC;
      if (kC % 4 == 0 && col0 + kC <= cols) {  // 16-byte loads: 4-aligned rows
#pragma unroll
        for (int jj = 0; jj + 3 < kC; jj += 4) {
          const float4 a = *reinterpret_cast<const float4*>(v + jj);
          const float4 b = __ldg(reinterpret_cast<const float4*>(x + col0 + jj));
          sum += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
        }
      } else {
#pragma unroll
        for (int jj = 0; jj < kC; ++jj)
          if (col0 + jj < cols) sum += v[jj] * __ldg(&x[col0 + jj]);
      }
    }
  }
  // Lanes of the same row i sit kR apart; no thread returned early, so all lanes shuffle. Slot s
  // only reads slot s + half < kSlots, so the idle lanes' zeros are never added.
#pragma unroll
  for (int half = kSlots / 2; half > 0; half /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, half * kR, kGroup);
  const long long row = br * kR + i;
  if (slot == 0 && br < block_rows && row < rows) y[row] = sum;
}
)";

std::vector<expert_config> space(const matrix_features& f, int) {
  // Square blocks whose measured fill is high: BSR's padding then costs less than CSR's indices;
  // the power-of-two sizes and the detected block size (3x3, 6x6 FEM blocks).
  std::vector<expert_config> out;
  for (int64_t b : bsr_block_sizes(f)) {
    // A thread per row (the smallest group holding r lanes), or a warp per block row.
    for (int64_t group : {pow2_at_least(b), int64_t{32}})
      for (int64_t block : {128, 256})
        out.push_back(
            make_config(info(), {{"r", b}, {"c", b}}, {{"block", block}, {"group", group}}));
  }
  return out;
}

kernel_program emit(const expert_config& c) {
  const int64_t block = c.param("block"), group = c.param("group");
  const int64_t r = c.format_param("r"), cc = c.format_param("c");
  require_block(c, block);
  require(r >= 1 && r <= 32, c, "r must be 1..32");
  require(cc >= 1 && cc <= 64, c, "c must be 1..64");
  require(is_pow2(group) && group >= r && group <= 32, c,
          "group must be a power of two with r <= group <= 32");
  return emit_rows_kernel(c, format_kind::bsr, source, block / group);
}

}  // namespace

double block_fill_of(const matrix_features& f, int64_t b) {
  if (b == f.block_size) return f.block_size_fill;
  return b == 2 ? f.block_fill_2 : b == 4 ? f.block_fill_4 : b == 8 ? f.block_fill_8 : 0;
}

std::vector<int64_t> bsr_block_sizes(const matrix_features& f) {
  std::vector<int64_t> out;
  if (f.nnz == 0) return out;
  for (int64_t b : {2, 4, 8})
    if (block_fill_of(f, b) >= (b == 2 ? 0.7 : 0.6)) out.push_back(b);
  if (f.block_size > 1 && !is_pow2(f.block_size) && f.block_size_fill >= 0.6)
    out.push_back(f.block_size);
  return out;
}

family bsr_spmv() { return {info(), space, emit}; }

}  // namespace sparserl::expert_detail
