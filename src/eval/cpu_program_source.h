#pragma once
// The C++ translation unit the CPU runner compiles for one program (eval/cpu_runner.h):
//   eval/emu/cuda_emulation.h (the CUDA surface, as text)
//   + the device source (parameter defines + program), rewritten where g++ needs it
//   + one shim per entry point, `extern "C" void sparserl_emu_entry_<i>(void* const* args)`,
//     that unpacks the kernel arguments in ABI order and calls the entry point
//   + `sparserl_emu_shared_section`, which tells the child where __shared__ storage lies.
// #line directives keep g++'s messages pointing at the program's own lines ("program.cu:12").
#include <string>
#include <vector>

#include "kernel/abi.h"

namespace sparserl {

// Rewrites what only nvcc/NVRTC accept: `extern __shared__ T name[];` becomes a macro for the
// emulator's dynamic shared buffer (cuda_emulation.h explains), and #include of CUDA runtime
// headers (cuda_runtime.h, cuda.h, device_launch_parameters.h, ...) becomes a comment. Line
// numbers are preserved.
std::string rewrite_for_emulation(const std::string& device_source);

// The whole translation unit. Throws sparserl::error when an entry name is not an identifier.
// poison_shared = false selects plain statics for __shared__ (the fallback for g++'s "section
// type conflict").
std::string emulated_program_source(const std::string& emulation_header,
                                    const std::string& device_source,
                                    const std::vector<std::string>& entries,
                                    const std::vector<kernel_arg>& args, bool poison_shared = true);

}  // namespace sparserl
