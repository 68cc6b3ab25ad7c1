#pragma once
// What eval, tune and bench share: picking the executor and the embedded default matrix.
#include <memory>
#include <string>

#include "eval/runner.h"
#include "sparse/csr_matrix.h"

namespace sparserl::cli {

// "gpu" (the worker pool; error when no GPU), "cpu" (the emulator) or "auto" (GPU if one works).
// `gpu`: the CUDA device the GPU workers use (a data-parallel rank's own, LOCAL_RANK).
std::unique_ptr<program_runner> make_runner(const std::string& device, int workers = 1,
                                            int gpu = 0);
// sm_XY of the GPU a gpu runner drives; sm_90 (H100/H200) otherwise.
std::string device_arch(program_runner& runner);
// The Matrix Market file at `path`, or, for "", the embedded default (a 64 x 64-grid 2D 5-point
// stencil). `id` receives the name caches and reports use for it.
csr_matrix load_matrix_or_default(const std::string& path, std::string& id);

}  // namespace sparserl::cli
