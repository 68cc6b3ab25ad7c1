#pragma once
// A kernel program: what the policy writes and the harness runs. Text form (docs/kernel-abi.md):
//   FORMAT: <NAME> [key=value ...]          e.g. FORMAT: SELL C=32 sigma=256
//   LAUNCH[ <entry>]: block=<threads> (rows_per_block=<n> | nnz_per_block=<n> | grid=<n>)
//                     [k_per_block=<n>] [shared=<bytes>]
//   <CUDA device source defining the format's entry point(s)>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sparserl {

enum class sparse_op { spmv, spmm };
// In the order of kernel/format_registry.cpp.
enum class format_kind { csr, coo, ell, sell, bsr, dia, hyb, csr16, rcsr, hcoo };

const char* op_name(sparse_op op);                                 // "spmv"
const char* format_name(format_kind format);                       // "CSR"
std::optional<sparse_op> parse_op(const std::string& text);        // case-insensitive
std::optional<format_kind> parse_format(const std::string& text);  // case-insensitive

// How the harness derives the grid of one entry point (one LAUNCH line).
struct launch_spec {
  std::string entry;           // "" = the format's only (or first) entry point
  int32_t block = 0;           // threads per block (1..1024)
  int64_t rows_per_block = 0;  // grid.x = ceil(work rows / rows_per_block)
  int64_t nnz_per_block = 0;   // grid.x = ceil(work nnz / nnz_per_block)
  int64_t grid = 0;            // grid.x fixed
  int64_t k_per_block = 0;     // SpMM: grid.y = ceil(k / k_per_block); 0 = 1 block row
  int32_t shared_bytes = 0;    // dynamic shared memory per block
};

struct kernel_program {
  format_kind format = format_kind::csr;
  std::map<std::string, int64_t> format_params;  // e.g. {"C": 32, "sigma": 256}
  std::vector<launch_spec> launches;             // one per entry point the format has
  std::string source;                            // device code only
  std::string to_text() const;                   // canonical text form, parseable again
};

}  // namespace sparserl
