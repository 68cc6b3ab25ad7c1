#include "eval/cpu_program_source.h"

#include <algorithm>
#include <regex>
#include <set>

#include "sparse/error.h"

namespace sparserl {

namespace {

// Headers nvcc/NVRTC provide implicitly or that only declare host APIs; the emulation header
// stands in for all of them.
const std::set<std::string> cuda_headers = {"cuda_runtime.h",
                                            "cuda_runtime_api.h",
                                            "cuda.h",
                                            "device_launch_parameters.h",
                                            "device_functions.h",
                                            "cuda_device_runtime_api.h",
                                            "sm_20_atomic_functions.h",
                                            "sm_30_intrinsics.h",
                                            "sm_32_intrinsics.h",
                                            "sm_60_atomic_functions.h",
                                            "vector_types.h",
                                            "vector_functions.h",
                                            "cuda_fp16.h",
                                            "cuda_bf16.h"};

int lines_in(const std::string& s, size_t from, size_t to) {
  return static_cast<int>(std::count(s.begin() + static_cast<std::ptrdiff_t>(from),
                                     s.begin() + static_cast<std::ptrdiff_t>(to), '\n'));
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Drops __align__(...), alignas(...) and __attribute__((...)) from a declaration: alignment is
// the emulator's business (the buffer is 16-byte aligned).
std::string strip_alignment(const std::string& decl) {
  static const char* keywords[] = {"__align__", "alignas", "__attribute__"};
  std::string s = decl;
  for (const char* kw : keywords) {
    for (size_t at = s.find(kw); at != std::string::npos; at = s.find(kw)) {
      size_t p = s.find('(', at);
      if (p == std::string::npos) return s;
      int depth = 0;
      size_t end = p;
      for (; end < s.size(); ++end) {
        if (s[end] == '(') ++depth;
        if (s[end] == ')' && --depth == 0) break;
      }
      if (end >= s.size()) return s;
      s.erase(at, end + 1 - at);
    }
  }
  return s;
}

// One `extern __shared__ T name[];` starting at `begin` (the `extern`), ending at `semicolon`;
// "" when it is not of that form (then it is left for g++ to reject).
std::string shared_macro(const std::string& src, size_t after_shared, size_t semicolon) {
  static const std::regex decl(R"(^([\s\S]*?)\b([A-Za-z_]\w*)\s*\[\s*\]$)");
  const std::string body =
      trim(strip_alignment(src.substr(after_shared, semicolon - after_shared)));
  std::smatch m;
  if (!std::regex_match(body, m, decl)) return "";
  const std::string type = trim(m[1].str());
  if (type.empty() || type.find_first_of("[],=()") != std::string::npos) return "";  // a list
  return "#define " + m[2].str() + " (reinterpret_cast<" + type +
         "*>(sparserl_emu_dynamic_shared))";
}

std::string rewrite_extern_shared(const std::string& src) {
  static const std::regex start(R"(\bextern\s+__shared__\b)");
  std::string out;
  size_t copied = 0;
  for (std::sregex_iterator it(src.begin(), src.end(), start), end; it != end; ++it) {
    const auto at = static_cast<size_t>(it->position());
    if (at < copied) continue;
    const size_t after = at + static_cast<size_t>(it->length());
    const size_t semicolon = src.find(';', after);
    if (semicolon == std::string::npos) break;
    const std::string macro = shared_macro(src, after, semicolon);
    if (macro.empty()) continue;
    out.append(src, copied, at - copied);
    // The text after the `;` continues the declaration's last line: renumber it as such.
    const int line = 1 + lines_in(src, 0, semicolon);
    out += "\n" + macro + "\n#line " + std::to_string(line) + "\n";
    copied = semicolon + 1;
  }
  out.append(src, copied, std::string::npos);
  return out;
}

std::string comment_out_cuda_includes(const std::string& src) {
  static const std::regex include(R"(^([ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"][^\n]*)$)",
                                  std::regex::multiline);
  std::string out;
  size_t copied = 0;
  for (std::sregex_iterator it(src.begin(), src.end(), include), end; it != end; ++it) {
    if (!cuda_headers.count((*it)[2].str())) continue;
    const auto at = static_cast<size_t>(it->position());
    out.append(src, copied, at - copied);
    out += "// (provided by the CPU emulation) " + trim((*it)[1].str());
    copied = at + static_cast<size_t>(it->length());
  }
  out.append(src, copied, std::string::npos);
  return out;
}

const char* argument_expression(arg_kind kind) {
  switch (kind) {
    case arg_kind::i32:
      return "*static_cast<int*>";
    case arg_kind::i32_array:
      return "static_cast<int*>";
    case arg_kind::u16_array:
      return "static_cast<unsigned short*>";
    default:
      return "static_cast<float*>";  // f32_array, input, output
  }
}

bool is_identifier(const std::string& s) {
  static const std::regex id(R"([A-Za-z_][A-Za-z0-9_]*)");
  return std::regex_match(s, id);
}

}  // namespace

std::string rewrite_for_emulation(const std::string& device_source) {
  return rewrite_extern_shared(comment_out_cuda_includes(device_source));
}

std::string emulated_program_source(const std::string& emulation_header,
                                    const std::string& device_source,
                                    const std::vector<std::string>& entries,
                                    const std::vector<kernel_arg>& args, bool poison_shared) {
  std::string s;
  if (!poison_shared) s += "#define SPARSERL_EMU_SHARED_UNPOISONED 1\n";
  s += "#line 1 \"cuda_emulation.h\"\n" + emulation_header + "\n";
  s += "#line 1 \"program.cu\"\n" + rewrite_for_emulation(device_source) + "\n";
  s += "#line 1 \"sparserl_entry_shims\"\n";
  // Pointers are passed non-const, whatever the signature says: a program that declares its
  // arrays mutable still compiles, and the child notices when it writes them.
  for (size_t e = 0; e < entries.size(); ++e) {
    if (!is_identifier(entries[e]))
      throw error("cpu emulation: entry name '" + entries[e] + "' is not an identifier");
    s += "extern \"C\" void sparserl_emu_entry_" + std::to_string(e) + "(void* const* a) {\n  " +
         entries[e] + "(";
    for (size_t i = 0; i < args.size(); ++i) {
      s += (i ? ", " : "") + std::string(argument_expression(args[i].kind)) + "(a[" +
           std::to_string(i) + "])";
    }
    s += ");\n}\n";
  }
  s += "extern \"C\" unsigned char __start_sparserl_shared[] __attribute__((weak, "
       "visibility(\"hidden\")));\n"
       "extern \"C\" unsigned char __stop_sparserl_shared[] __attribute__((weak, "
       "visibility(\"hidden\")));\n"
       "extern \"C\" void sparserl_emu_shared_section(unsigned char** begin, unsigned char** end) "
       "{\n"
       "  *begin = __start_sparserl_shared;\n"
       "  *end = __stop_sparserl_shared;\n"
       "}\n";
  return s;
}

}  // namespace sparserl
