#pragma once
// Screens untrusted device source before it is compiled, for the GPU path (NVRTC) and the CPU
// emulator (a host compiler) alike: device code has no business with I/O, allocation, inline
// assembly, host functions, dynamic parallelism or system calls, and nothing may build such a
// token indirectly (token pasting, _Pragma, digraphs, trigraphs, line splices are all seen
// through). Works on tokens (kernel/cuda_lexer.h), so comments and literals may mention anything.
// It is one layer: the runners still sandbox what passes. Rules: docs/kernel-abi.md.
#include <cstddef>
#include <string>
#include <vector>

namespace sparserl {

struct screen_options {
  // Headers `#include <...>` / `#include "..."` may name. Both compile paths must provide them
  // (the compiler passes the CUDA include directory to NVRTC).
  std::vector<std::string> allowed_includes = {"cuda_fp16.h", "cuda_bf16.h"};
  size_t max_bytes = size_t{1} << 20;  // longer sources are refused outright
};

struct screen_result {
  bool ok = true;
  int line = 0;        // 1-based line of the first offence (0 when ok)
  std::string reason;  // "line 12: inline assembly ('asm') is not allowed"
};

screen_result screen_device_source(const std::string& source, const screen_options& options = {});

}  // namespace sparserl
