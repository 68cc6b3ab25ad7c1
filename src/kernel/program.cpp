#include "kernel/program.h"

#include <algorithm>
#include <cctype>

#include "kernel/abi.h"
#include "kernel/format_registry.h"

namespace sparserl {

namespace {

bool iequals(const std::string& a, const char* b) {
  size_t i = 0;
  for (; i < a.size() && b[i] != '\0'; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return i == a.size() && b[i] == '\0';
}

std::string launch_body(const launch_spec& l) {
  std::string out = "block=" + std::to_string(l.block);
  if (l.rows_per_block != 0) out += " rows_per_block=" + std::to_string(l.rows_per_block);
  if (l.nnz_per_block != 0) out += " nnz_per_block=" + std::to_string(l.nnz_per_block);
  if (l.grid != 0) out += " grid=" + std::to_string(l.grid);
  if (l.k_per_block != 0) out += " k_per_block=" + std::to_string(l.k_per_block);
  if (l.shared_bytes != 0) out += " shared=" + std::to_string(l.shared_bytes);
  return out;
}

}  // namespace

const char* op_name(sparse_op op) { return op == sparse_op::spmv ? "spmv" : "spmm"; }

const char* format_name(format_kind format) { return find_format(format).name; }

std::optional<sparse_op> parse_op(const std::string& text) {
  if (iequals(text, "spmv")) return sparse_op::spmv;
  if (iequals(text, "spmm")) return sparse_op::spmm;
  return std::nullopt;
}

std::optional<format_kind> parse_format(const std::string& text) {
  for (const format_info& f : format_registry())
    if (iequals(text, f.name)) return f.kind;
  return std::nullopt;
}

std::string kernel_program::to_text() const {
  std::string out = "FORMAT: ";
  out += format_name(format);
  // The format's own parameters in their documented order (BSR: r before c), then any others.
  const std::vector<std::string> known = format_param_names(format);
  for (const std::string& key : known)
    if (auto it = format_params.find(key); it != format_params.end())
      out += " " + key + "=" + std::to_string(it->second);
  for (const auto& [key, value] : format_params)
    if (std::find(known.begin(), known.end(), key) == known.end())
      out += " " + key + "=" + std::to_string(value);
  out += '\n';
  for (const launch_spec& l : launches) {
    out += "LAUNCH";
    if (!l.entry.empty()) out += " " + l.entry;
    out += ": " + launch_body(l) + "\n";
  }
  out += source;
  return out;
}

}  // namespace sparserl
