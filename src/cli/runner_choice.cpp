#include "cli/runner_choice.h"

#include "eval/cpu_runner.h"
#include "eval/gpu_runner.h"
#include "sparse/error.h"
#include "sparse/generators.h"
#include "sparse/matrix_market.h"

namespace sparserl::cli {

std::unique_ptr<program_runner> make_runner(const std::string& device, int workers, int gpu) {
  if (device == "cpu") return std::make_unique<cpu_runner>();
  if (device != "gpu" && device != "auto")
    throw error("--device " + device + ": expected cpu, gpu or auto");
  try {
    gpu_runner_options options;
    options.workers_per_device = std::max(1, workers);
    options.devices = {gpu};
    auto gpu = std::make_unique<gpu_runner>(options);
    const device_info info = gpu->device();
    if (info.ok) return gpu;
    if (device == "gpu") throw error("--device gpu: " + info.error);
  } catch (const error&) {
    if (device == "gpu") throw;
  }
  return std::make_unique<cpu_runner>();
}

std::string device_arch(program_runner& runner) {
  if (auto* gpu = dynamic_cast<gpu_runner*>(&runner)) {
    const device_info info = gpu->device();
    if (info.ok) return "sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor);
  }
  return "sm_90";
}

csr_matrix load_matrix_or_default(const std::string& path, std::string& id) {
  if (!path.empty()) {
    id = path;
    return read_matrix_market(path);
  }
  generator_spec spec;
  spec.family = "stencil2d";
  spec.rows = 4096;
  id = "default:stencil2d-4096";
  return generate_matrix(spec);
}

}  // namespace sparserl::cli
