#pragma once
// The expert kernel library: hand-written, parameterised kernel templates that emit complete
// kernel programs in the harness's ABI (kernel/abi.h). They seed the SFT corpus, give the
// autotuner its search space and the reward a strong reference next to cuSPARSE.
//
// Every template is correct for every matrix (empty, empty rows, one row, very long rows,
// rectangular, any k): parameters change speed, never results. Constants are baked into the
// source as constexpr values, so a program does not depend on the harness's SPARSERL_* defines.
// One file per family: expert_<format>_<op>.cpp (see expert_library.cpp for the list).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernel/program.h"
#include "sparse/features.h"

namespace sparserl {

// One knob of a template and the values its space draws from (values derived from the matrix,
// such as merge-path rows_per_block, list typical values; any value meeting `meaning` is valid).
struct expert_param {
  std::string name;
  std::vector<int64_t> values;
  std::string meaning;
};

struct expert_template {
  std::string name;  // "csr_vector"
  sparse_op op = sparse_op::spmv;
  format_kind format = format_kind::csr;
  std::string summary;                      // the parallel decomposition, one line
  std::vector<expert_param> format_params;  // the FORMAT line's keys (SELL C, sigma; BSR r, c)
  std::vector<expert_param> params;         // the template's knobs (block, lanes, tile, ...)
};

// One instantiation of a template: everything emit_program needs.
struct expert_config {
  std::string name;  // template name
  sparse_op op = sparse_op::spmv;
  format_kind format = format_kind::csr;
  std::map<std::string, int64_t> format_params;
  std::map<std::string, int64_t> params;

  // "csr_vector spmv CSR block=256 lanes=8" (format params first, then knobs, sorted by key).
  std::string describe() const;
  // The knob `key`; throws sparserl::error naming the template when it is missing.
  int64_t param(const std::string& key) const;
  int64_t format_param(const std::string& key) const;
};

// Every template of the library, in a fixed order.
const std::vector<expert_template>& expert_templates();

// The configurations worth timing for a matrix with features `f`, pruned by its structure (no ELL
// when the padding is large, DIA only when the diagonals are full, BSR only when blocks are
// dense, ...). `k` is the SpMM column count (ignored for SpMV). Never empty.
std::vector<expert_config> expert_space(sparse_op op, const matrix_features& f, int k);

// The complete program of `config`. Throws sparserl::error on an unknown template, a mismatched
// op/format, a missing or unknown parameter, or a value outside the template's constraints. Its
// source starts with the line "// expert: " + config.describe().
kernel_program emit_program(const expert_config& config);

// The description on a program text's "// expert: " line (what emit_program wrote), "" when it has
// none.
std::string expert_description(const std::string& program_text);

// The config a description names (the inverse of expert_config::describe), std::nullopt when it
// names no template of the library or its keys are not the template's. A model writes the
// "// expert:" line itself: whether the program is that config's is for the caller to check.
std::optional<expert_config> parse_expert_description(const std::string& description);

// ---- for the template files only -------------------------------------------------------------
namespace expert_detail {

// Rows longer than this span many 32 x steps COO chunks (64 warps at 1 step): the COO and HYB
// spaces add a long-chunk variant for them.
inline constexpr int64_t long_tail_row = 2048;

struct family {
  expert_template info;
  std::vector<expert_config> (*space)(const matrix_features& f, int k);
  kernel_program (*emit)(const expert_config& config);  // params already checked against info
};

// Defined one per expert_*.cpp file.
family csr_scalar_spmv();
family csr_vector_spmv();
family csr_adaptive_spmv();
family csr_merge_spmv();
family csr_merge_tiles_spmv();
family csr_split_spmv();
family coo4_spmv();
family ell_spmv();
family sell_spmv();
family bsr_spmv();
family dia_spmv();
family coo_spmv();
family hyb_spmv();
family hyb4_spmv();
family hcoo_spmv();
// hcoo's fixed grid for a table of `hubs` columns: the 512-thread blocks an H100 / H200
// multiprocessor holds with that table in shared memory, times its 132 multiprocessors.
int64_t hcoo_grid(int64_t hubs);
family csr_rowgroup_spmm();
family csr_merge_spmm();
family ell_spmm();
family sell_spmm();
family bsr_spmm();
family hyb_spmm();
family csr16_vector_spmv();
family csr16_stream_spmv();
family csr16_rowgroup_spmm();
family rcsr_vector_spmv();
family rcsr_hubs_vector_spmv();
family rcsr_rowgroup_spmm();

// The parameter list of (op, format)'s entry points, as entry_signature spells it (names
// included: the template bodies use them, e.g. SELL's slice_height, SpMM's B and C).
std::string entry_args(sparse_op op, format_kind format);

// Template sources take what their FORMAT and LAUNCH lines state (block, r x c, C, lanes or
// group = block / rows_per_block, tile = k_per_block, ...) from the harness's SPARSERL_* macros
// (docs/kernel-abi.md, section 5), never from a second literal: a policy can then not write
// constants that contradict its header (PPO on the H200, 2026-12-06: `kR = 4` under
// `FORMAT: BSR r=3 c=3`, illegal addresses on 4 of 9 held-out FEM matrices).
// Replaces every @KEY@ in `text`; throws sparserl::error when a placeholder is left unfilled.
std::string fill(std::string text, const std::map<std::string, std::string>& values);
std::map<std::string, std::string> as_text(const std::map<std::string, int64_t>& values);

// A config of `info` with the given values, for the space functions.
expert_config make_config(const expert_template& info, std::map<std::string, int64_t> format_params,
                          std::map<std::string, int64_t> params);

launch_spec rows_launch(const std::string& entry, int64_t block, int64_t rows_per_block,
                        int64_t k_per_block = 0);
launch_spec nnz_launch(const std::string& entry, int64_t block, int64_t nnz_per_block);

// Throws sparserl::error("<template>: <what>") unless `ok`.
void require(bool ok, const expert_config& config, const std::string& what);

// Throws unless `block` (the template's threads per block) is a multiple of 32 in 32..1024.
void require_block(const expert_config& config, int64_t block);

// Thread-per-row templates (ELL, DIA) share their emitter: one LAUNCH line, a row (or
// rows_per_thread rows, a block apart) per thread; ELL also their knobs (DIA's space adds rows
// per thread): blocks of 128/256/512 without unrolling and 256 unrolled by 4.
std::vector<expert_config> thread_per_row_space(const expert_template& info);
kernel_program emit_thread_per_row(const expert_config& c, format_kind format,
                                   const std::string& source, int64_t rows_per_thread = 1);
// Lane-group-per-row SpMV templates (csr_vector, csr16_vector): `lanes` lanes reduce a row. The
// space: lane counts of `lane_counts` within a factor of four of the mean row length (fewer
// serialise each row, more leave lanes idle; 32 also for rows over 128), blocks of 128 and 256.
std::vector<expert_config> lanes_per_row_space(const expert_template& info,
                                               const matrix_features& f,
                                               const std::vector<int64_t>& lane_counts);
kernel_program emit_lanes_per_row(const expert_config& c, format_kind format,
                                  const std::string& source);
// One SpMV entry point launched over rows (block threads, rows_per_block rows a block): `source`
// filled with the params, `extra_values` and @ARGS@. Every SpMV template with one rows launch ends
// in it, after checking its own parameters (the emitters here, BSR, SELL, the merge and split CSR).
kernel_program emit_rows_kernel(const expert_config& c, format_kind format,
                                const std::string& source, int64_t rows_per_block,
                                std::map<std::string, std::string> extra_values = {});
// Templates whose blocks stage their rows' nonzeros in shared memory (csr_adaptive, csr16_stream)
// share their emitter: checks block, rows_per_block and stream_cap (<= 8192, shared memory), fills
// `source` with the params, `extra_values` and @ARGS@, one launch of rows_per_block rows a block.
kernel_program emit_row_stream(const expert_config& c, format_kind format,
                               const std::string& source,
                               std::map<std::string, std::string> extra_values = {});
// RCSR's templates only for a square matrix (a symmetric renumbering needs one) whose order looks
// random: on the H200's realistic suite (2026-12-04) RCSR was the fastest on the three graphs in
// random order and on none of the others, where the gather and the scattered write cost more
// than a renumbering close to the identity saves.
bool rcsr_order_pays(const matrix_features& f);
bool is_pow2(int64_t v);
int64_t pow2_at_least(int64_t v);  // smallest power of two >= max(v, 1)
int64_t clamp64(int64_t v, int64_t lo, int64_t hi);

// Whether SELL with slice height C and window sigma stays near the nonzeros in size (SpMV and
// SpMM spaces).
bool sell_padding_bounded(const matrix_features& f, int64_t C, int64_t sigma);

// A full-warp shuffle sum, `float warp_sum(float)`, valid in lane 0 (device source).
extern const char* const warp_sum_source;
// The merge-path search and block cut shared by the merge templates (device source).
extern const char* const merge_search_source;
// The warp-segmented COO accumulation shared by COO and HYB: the kernel `entry` (arguments
// `args`) over the COO arrays named prefix + nnz / row_idx / col_idx / values ("" for COO, "coo_"
// for HYB's COO part), 32 entries a warp step (per_lane 1: coo, hyb) or 128, four consecutive
// entries a lane (per_lane 4: coo4, hyb4, hcoo). The template defines kBlock and kSteps. With
// per_lane 4, warps take chunks grid-stride (one each when the grid covers the entries) and
// `x_of`, when not empty, replaces the kernel's first lines, which define `x_of(c)` (the x of
// column c; by default __ldg(&x[c])).
std::string coo_segment(int per_lane, const std::string& entry, const std::string& args,
                        const std::string& prefix, const std::string& x_of = "");

// SpMM column tiles: a lane group of `group` lanes covers `tile` columns of C (k_per_block), in
// steps of group * vec columns; lane l's step s, element v is column col0 + s * group * vec + v
// with col0 = blockIdx.y * tile + l * vec. The device helpers tile_load / tile_store (k-guarded;
// 16-byte accesses when vec == 4 and k % 4 == 0) need kGroup, kVec, kSteps and kAcc defined.
std::string spmm_tile_source(int64_t vec);
// Throws unless tile % (group * vec) == 0, vec is 1 or 4, group a power of two <= 32 and
// tile / group <= max_acc (the accumulators a lane keeps).
void check_tile(const expert_config& config, int64_t group, int64_t tile, int64_t vec,
                int64_t max_acc);
// The vec a (group, tile) gets: 4 when each lane's share is a multiple of 4 and k % 4 == 0.
int64_t tile_vec(int64_t group, int64_t tile, int k);
// The tiles worth trying for k, largest first: the powers of two 32..256 not beyond k (rounded
// up), or k rounded up when k < 32.
std::vector<int64_t> spmm_tiles(int k);
// The lane-group SpMM configurations (csr_rowgroup, csr16_rowgroup, rcsr_rowgroup, ELL, SELL):
// the two widest tiles of spmm_tiles(k), lane groups of 2, 8 and 32 that fit the tile with at
// most 16 columns a lane, blocks of 256 and the vec tile_vec gives; widest tile first.
std::vector<std::map<std::string, int64_t>> rowgroup_configs(int k);
// A one-pass lane-group SpMM program over `format` whose source uses @ARGS@ and @TILE@ (the
// tile helpers): checks block and tile, one unnamed launch of block / group rows per block and
// a k-tile per block column.
kernel_program emit_rowgroup(const expert_config& c, format_kind format, const char* source);
// BSR SpMM with r x r blocks and `group`-lane groups: the widest tile of spmm_tiles(k) that
// keeps r * tile / group accumulators within 32 registers (and tile >= group); 0 when none.
int64_t bsr_spmm_tile(int64_t r, int64_t group, int k);
// Merge-path SpMM: the rows per block that give each of the 8 warps about `per_warp` rows +
// nonzeros.
int64_t merge_spmm_rows_per_block(const matrix_features& f, int64_t per_warp);

// The fill of aligned b x b blocks (features measure 2, 4, 8 and the detected block size;
// 0 for other sizes).
double block_fill_of(const matrix_features& f, int64_t b);
// The square BSR block sizes worth trying: 2 (fill >= 0.7), 4 and 8 (>= 0.6), and the detected
// block size when it is not a power of two (fill >= 0.6). Empty when nothing blocks.
std::vector<int64_t> bsr_block_sizes(const matrix_features& f);

// Power-law rows: the longest row is over 32 x the mean, or the Gini coefficient of the row
// lengths is over 0.6; any row-to-lane mapping leaves a few groups with most of the work. The
// nnz-split SpMM (hyb_split) is offered only then, and the heuristic splits nonzeros only then.
bool skewed_rows(const matrix_features& f);

}  // namespace expert_detail
}  // namespace sparserl
