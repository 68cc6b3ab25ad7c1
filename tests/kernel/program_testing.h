#pragma once
// Shared by the kernel tests: field-wise equality of programs, and valid completions for every
// (op, format) built from the ABI itself.
#include <string>
#include <vector>

#include "kernel/abi.h"
#include "kernel/format_registry.h"
#include "kernel/program.h"

namespace sparserl::testing {

inline bool same_launch(const launch_spec& a, const launch_spec& b) {
  return a.entry == b.entry && a.block == b.block && a.rows_per_block == b.rows_per_block &&
         a.nnz_per_block == b.nnz_per_block && a.grid == b.grid && a.k_per_block == b.k_per_block &&
         a.shared_bytes == b.shared_bytes;
}

inline bool same_program(const kernel_program& a, const kernel_program& b) {
  if (a.format != b.format || a.format_params != b.format_params || a.source != b.source ||
      a.launches.size() != b.launches.size())
    return false;
  for (size_t i = 0; i < a.launches.size(); ++i)
    if (!same_launch(a.launches[i], b.launches[i])) return false;
  return true;
}

// Device source defining every entry point of (op, format) with a body that touches braces,
// comments and literals, so mutations have something to break.
inline std::string sample_source(sparse_op op, format_kind format) {
  std::string out = "// kernel for " + std::string(format_name(format)) + " { not a brace }\n";
  for (const entry_point& e : entry_points(op, format)) {
    out += entry_signature(op, format, e.name) + " {\n";
    out += "  const int i = blockIdx.x * blockDim.x + threadIdx.x;  /* a (comment) */\n";
    out += "  if (i >= rows) { return; }\n";
    out += "  const char* tag = \"}{)(\"; (void)tag;\n";
    out += "}\n";
  }
  return out;
}

// A complete, valid completion: FORMAT line with parameters, named LAUNCH lines, source.
inline std::string sample_completion(sparse_op op, format_kind format) {
  std::string out = "FORMAT: " + std::string(format_name(format));
  for (const auto& [key, value] : default_format_params(format))
    out += " " + key + "=" + std::to_string(value);
  out += "\n";
  for (const entry_point& e : entry_points(op, format)) {
    out += "LAUNCH " + e.name + ": block=128 ";
    out += e.nnz_work ? "nnz_per_block=512" : "rows_per_block=128";
    if (op == sparse_op::spmm) out += " k_per_block=8";
    out += "\n";
  }
  return out + sample_source(op, format);
}

// Every format of the registry, so a new format is covered by every test looping over these.
inline const std::vector<format_kind> all_formats = [] {
  std::vector<format_kind> out;
  for (const format_info& f : format_registry()) out.push_back(f.kind);
  return out;
}();
constexpr sparse_op all_ops[] = {sparse_op::spmv, sparse_op::spmm};

}  // namespace sparserl::testing
