#pragma once
// The format registry: everything the harness, the completion parser and the CLI need to know
// about a storage format (its name, FORMAT-line parameters, ABI arguments, entry points and its
// converter from CSR), so adding a format is one format_<name>.cpp plus a row in
// format_registry.cpp (and its format_kind). The generic ABI code (abi.cpp) builds signatures,
// arguments and defines from these rows; the runners marshal the arguments by kind.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernel/kernel_arg.h"
#include "kernel/program.h"
#include "sparse/csr_matrix.h"

namespace sparserl {

// One FORMAT-line parameter: its key, default, range and compile-time define.
struct format_param_rule {
  const char* key;
  int64_t fallback;
  int64_t min, max;
  bool power_of_two;
  const char* define;   // the SPARSERL_* macro (BSR's r, c are BLOCK_R, BLOCK_C: SELL has C)
  const char* meaning;  // one line, for the CLI and messages
};

// One format argument of the entry points, between (rows, cols[, k]) and the dense operands.
struct format_slot {
  arg_kind kind;
  const char* name;  // as in the signature, e.g. "row_ptr"
};

// One entry point: "<op>_<suffix>", e.g. spmv_hyb_ell.
struct format_entry {
  const char* suffix;
  bool nnz_work;  // nnz_per_block may split it (it counts format_data::work_nnz)
};

// What a converter hands the harness for one matrix.
struct format_data {
  std::vector<kernel_arg> args;  // one per format_info::slots, in order
  int64_t work_rows = 0;         // units that rows_per_block divides (rows; BSR: block rows)
  int64_t work_nnz = 0;          // units that nnz_per_block divides on nnz entries
  int64_t coo_nnz = 0;           // HYB/COO: entries in the COO part
  // What the layout is, beyond its arrays (SELL: C, sigma, slices), for `matrix convert`.
  std::vector<std::pair<std::string, int64_t>> facts;
};

struct format_info {
  format_kind kind;
  const char* name;         // "SELL": the FORMAT line's word (matched case-insensitively)
  const char* description;  // one line
  std::vector<format_param_rule> params;
  std::vector<format_slot> slots;
  // In launch order. Together they must write every output element (not necessarily the first:
  // RCSR's first entry gathers x into its scratch buffer, the second writes y).
  std::vector<format_entry> entries;
  // `params` are normalised (every key present, in range). Padded layouts refuse to store more
  // than max_elements elements; a format that cannot hold the matrix throws sparserl::error
  // saying why (the program then fails to build, like a bad parameter).
  format_data (*convert)(const csr_matrix& a, const std::map<std::string, int64_t>& params,
                         int64_t max_elements);
  // The same conversion as C++17 host code for headers that `sparserl export` writes
  // (kernel/export_header.h): the body of a function that must build exactly what `convert`
  // builds, from standard C++ alone. In scope: `a`, the CSR matrix (int rows, cols; long long
  // nnz; std::vector<int> row_ptr, col_idx; std::vector<float> values; int row_length(int r));
  // each parameter as a `const long long` named by its key (SELL: C, sigma); `max_elements`,
  // the padding limit (long long); `check_elements(format, elements, max_elements)`, which
  // throws std::runtime_error above it; and `f`, to fill: one member per slot, named as the
  // slot (int, or std::vector of int, float, unsigned short; nothing for a scratch slot, which
  // the exported class allocates), and long long work_rows,
  // work_nnz. Errors are thrown as std::runtime_error naming the format.
  const char* host_conversion;
};

// Every format, in format_kind order.
const std::vector<format_info>& format_registry();
const format_info& find_format(format_kind kind);

// Argument constructors for converters (scalar_arg throws when the value does not fit in int).
kernel_arg scalar_arg(const char* name, int64_t value);
kernel_arg int_array(const char* name, std::vector<int32_t> values);
kernel_arg float_array(const char* name, std::vector<float> values);
kernel_arg short_array(const char* name, std::vector<uint16_t> values);
// The placeholder of a scratch slot (the runner allocates the buffer; kernel_arg.h).
kernel_arg scratch_arg(const char* name);

// One per format_<name>.cpp.
namespace format_files {
format_info csr();
format_info coo();
format_info ell();
format_info sell();
format_info bsr();
format_info dia();
format_info hyb();
format_info csr16();
format_info rcsr();
format_info hcoo();
}  // namespace format_files

}  // namespace sparserl
