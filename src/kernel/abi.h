#pragma once
// The kernel ABI: for each (op, format) the entry points, their exact argument lists and the
// device data the harness builds from CSR, all generated from the format registry
// (kernel/format_registry.h). Runners marshal kernel_args by kind, so adding a format touches
// neither this file nor the runners. The human-readable form is docs/kernel-abi.md.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernel/kernel_arg.h"
#include "kernel/program.h"
#include "sparse/csr_matrix.h"

namespace sparserl {

struct entry_point {
  std::string name;       // e.g. "spmv_csr"
  bool nnz_work = false;  // true when nnz_per_block counts this entry's nonzeros (COO parts)
};

// Entry points of (op, format), in launch order. The harness launches them in sequence on one
// stream; together they must write every output element (RCSR: only the second writes y).
std::vector<entry_point> entry_points(sparse_op op, format_kind format);

// The exact C signature of an entry point, e.g.
// extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ ...).
std::string entry_signature(sparse_op op, format_kind format, const std::string& entry);

// Format parameters each format requires/accepts, with defaults (e.g. SELL: C=32 sigma=1).
std::map<std::string, int64_t> default_format_params(format_kind format);
// The same keys in their documented order (BSR: r, c), for text forms and messages.
std::vector<std::string> format_param_names(format_kind format);
// Canonicalises `params` in place: keys matched case-insensitively to the format's own, defaults
// filled in, ranges checked (SELL C a power of two in 1..1024, sigma >= 1; BSR r, c in 1..64;
// HYB width >= 0, 0 = automatic). Returns "" on success, else the reason naming the parameter.
std::string normalize_format_params(format_kind format, std::map<std::string, int64_t>& params);

// The device data of `a` in the program's format (conversion happens here), in argument order.
struct format_arguments {
  std::vector<kernel_arg> args;
  int64_t work_rows = 0;  // units that rows_per_block divides (rows, or block rows for BSR)
  int64_t work_nnz = 0;   // stored entries that nnz_per_block divides (per entry: see abi.cpp)
  int64_t coo_nnz = 0;    // HYB/COO: entries in the COO part
  int64_t footprint_bytes = 0;  // bytes of the format arrays and scratch (memory penalty)
};
// Throws sparserl::error on bad format parameters (e.g. C not a power of two, padding too large)
// and on a matrix the format cannot hold (CSR16: a row spanning more than 65535 columns; RCSR:
// a matrix that is not square).
format_arguments build_arguments(sparse_op op, const csr_matrix& a, const kernel_program& program,
                                 int32_t k);

struct launch_geometry {
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
  uint32_t block_x = 1;
  uint32_t shared_bytes = 0;
};
struct launch_limits {
  int64_t max_threads_per_block = 1024;
  int64_t max_grid_x = 2147483647;
  int64_t max_grid_y = 65535;
  int64_t max_total_threads = int64_t{1} << 32;  // refuse "1e9-thread" launches beyond this
  int64_t max_shared_bytes = 227 * 1024;         // H200 opt-in maximum per block
};
// Throws sparserl::error with a precise reason when the launch is invalid or beyond the limits.
launch_geometry compute_geometry(const launch_spec& spec, const entry_point& entry,
                                 const format_arguments& args, int32_t k,
                                 const launch_limits& limits = {});

// `#define SPARSERL_<KEY> <value>` lines for every format and launch parameter, so device code can
// use them as compile-time constants (SPARSERL_C, SPARSERL_BLOCK, SPARSERL_ROWS_PER_BLOCK, ...).
std::string parameter_defines(const kernel_program& program);

}  // namespace sparserl
