#include "eval/gpu_worker/run_program.h"

#include <algorithm>
#include <cstring>

#include "eval/checked_runs.h"
#include "eval/gpu_worker/deadline_wait.h"
#include "eval/gpu_worker/fresh_inputs.h"
#include "eval/gpu_worker/timing.h"

namespace sparserl::gpu_worker {

namespace {

constexpr int64_t default_shared_limit = 48 * 1024;  // dynamic shared memory without opt-in

class module {
 public:
  explicit module(std::vector<char> image) {
    image.push_back('\0');  // PTX must be NUL-terminated; a cubin ignores the extra byte
    check(cuModuleLoadData(&m_, image.data()), "cuModuleLoadData");
  }
  ~module() {
    if (m_) cuModuleUnload(m_);
  }
  module(const module&) = delete;
  module& operator=(const module&) = delete;
  CUfunction function(const std::string& name) const {
    CUfunction f = nullptr;
    const CUresult r = cuModuleGetFunction(&f, m_, name.c_str());
    if (r == CUDA_ERROR_NOT_FOUND)
      throw cuda_failure("entry point '" + name + "' is not defined (extern \"C\" __global__)");
    check(r, "cuModuleGetFunction(" + name + ")");
    return f;
  }

 private:
  CUmodule m_ = nullptr;
};

int function_attribute(CUfunction f, CUfunction_attribute a) {
  int v = 0;
  check(cuFuncGetAttribute(&v, a, f), "cuFuncGetAttribute");
  return v;
}

// A refusal names the limit; nothing is launched. Raises the dynamic shared memory limit when the
// request is above the default 48 KB but within the opt-in maximum.
void prepare_launch(const device_info& dev, CUfunction f, const std::string& entry,
                    const launch_geometry& g) {
  auto refuse = [&](const std::string& why) {
    throw cuda_failure("launch of " + entry + " refused: " + why);
  };
  const int max_threads = function_attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  if (g.block_x < 1 || static_cast<int64_t>(g.block_x) > max_threads)
    refuse("block of " + std::to_string(g.block_x) + " threads, the kernel allows 1.." +
           std::to_string(max_threads) + " (device limit and register use)");
  const int64_t gx = g.grid_x, gy = g.grid_y, gz = g.grid_z;
  if (gx < 1 || gy < 1 || gz < 1 || gx > dev.max_grid_x || gy > dev.max_grid_y ||
      gz > dev.max_grid_z)
    refuse("grid " + std::to_string(gx) + " x " + std::to_string(gy) + " x " + std::to_string(gz) +
           " is outside the device's " + std::to_string(dev.max_grid_x) + " x " +
           std::to_string(dev.max_grid_y) + " x " + std::to_string(dev.max_grid_z));
  const int64_t static_shared = function_attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  const int64_t dynamic_shared = g.shared_bytes;
  if (static_shared + dynamic_shared > dev.max_shared_optin)
    refuse(std::to_string(dynamic_shared) + " B dynamic + " + std::to_string(static_shared) +
           " B static shared memory per block exceeds the device's opt-in maximum of " +
           std::to_string(dev.max_shared_optin) + " B");
  if (dynamic_shared > default_shared_limit ||
      static_shared + dynamic_shared > default_shared_limit)
    check(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(dynamic_shared)),
          "cuFuncSetAttribute(max dynamic shared) for " + entry);
}

// Kernel parameters in ABI order: scalars by value, arrays as device pointers, x and y, and the
// scratch buffer (one buffer serves every scratch slot: the ABI has at most one).
struct parameters {
  std::vector<int32_t> scalars;
  std::vector<CUdeviceptr> pointers;
  std::vector<void*> slots;

  parameters(const uploaded_data& data, CUdeviceptr x, CUdeviceptr y, CUdeviceptr work) {
    scalars.reserve(data.args.size());  // no reallocation: slots point into these
    pointers.reserve(data.args.size());
    for (const uploaded_arg& u : data.args) {
      switch (u.host.kind) {
        case arg_kind::i32:
          scalars.push_back(u.host.scalar);
          slots.push_back(&scalars.back());
          break;
        case arg_kind::i32_array:
        case arg_kind::f32_array:
        case arg_kind::u16_array:
          pointers.push_back(u.device.get());
          slots.push_back(&pointers.back());
          break;
        case arg_kind::input:
          pointers.push_back(x);
          slots.push_back(&pointers.back());
          break;
        case arg_kind::output:
          pointers.push_back(y);
          slots.push_back(&pointers.back());
          break;
        case arg_kind::scratch:
          pointers.push_back(work);
          slots.push_back(&pointers.back());
          break;
      }
    }
  }
};

std::string check_shapes(const gpu_protocol::run_program_request& q) {
  if (q.entries.empty() || q.entries.size() != q.geometry.size())
    return "bad request: entries and launch geometries differ in number";
  if (q.inputs.empty()) return "bad request: no trials";
  if (q.rows < 0 || q.cols < 0 || q.k < 1 || q.output_length != int64_t{q.rows} * q.k)
    return "bad request: bad problem shape";
  for (const auto& x : q.inputs)
    if (static_cast<int64_t>(x.size()) != int64_t{q.cols} * q.k)
      return "bad request: input of " + std::to_string(x.size()) + " values";
  return "";
}

}  // namespace

gpu_protocol::run_program_reply run_program(device_context& device, data_cache& cache,
                                            const gpu_protocol::run_program_request& q) {
  gpu_protocol::run_program_reply reply;
  auto fail = [&](const std::string& why, bool fatal) {
    reply.result = {false, why, fatal};
    reply.trials.clear();
    reply.checked_runs.clear();
    reply.timed = false;
    return reply;
  };
  if (const std::string why = check_shapes(q); !why.empty()) return fail(why, false);
  uploaded_data* data = cache.find(q.key);
  if (!data) return fail("bad request: data '" + q.key + "' is not loaded", false);

  std::string phase = "module load";
  try {
    const module mod(q.cubin);
    std::vector<CUfunction> functions;
    for (size_t i = 0; i < q.entries.size(); ++i) {
      functions.push_back(mod.function(q.entries[i]));
      prepare_launch(device.info(), functions.back(), q.entries[i], q.geometry[i]);
    }
    const size_t in_bytes = q.inputs[0].size() * sizeof(float);
    const size_t out_bytes = static_cast<size_t>(q.output_length) * sizeof(float);
    const bool has_scratch =
        std::any_of(data->args.begin(), data->args.end(),
                    [](const uploaded_arg& u) { return u.host.kind == arg_kind::scratch; });
    device_buffer x(in_bytes), y(out_bytes);
    device_buffer work(has_scratch ? in_bytes : 0);  // as large as the input
    parameters params(*data, x.get(), y.get(), work.get());
    const CUstream stream = device.stream();

    // Before every run, timed ones included (outside the timed region): y and the scratch buffer
    // hold NaN, so a program that leaves an output unwritten, or reads scratch it has not
    // written (e.g. RCSR without its gather), fails verification.
    auto poison = [&](CUstream s) {
      check(cuMemsetD32Async(y.get(), q.poison_bits, static_cast<size_t>(q.output_length), s),
            "poisoning the output");
      if (has_scratch)
        check(cuMemsetD32Async(work.get(), q.poison_bits, q.inputs[0].size(), s),
              "poisoning the scratch buffer");
    };
    auto launch_all = [&](CUstream s) {
      for (size_t i = 0; i < functions.size(); ++i) {
        const launch_geometry& g = q.geometry[i];
        check(cuLaunchKernel(functions[i], g.grid_x, g.grid_y, g.grid_z, g.block_x, 1, 1,
                             g.shared_bytes, s, params.slots.data(), nullptr),
              phase + ": launch of " + q.entries[i]);
      }
    };

    std::vector<float> x_back(q.inputs[0].size());
    for (size_t t = 0; t < q.inputs.size(); ++t) {
      const std::string trial = "trial " + std::to_string(t + 1);
      phase = trial;
      if (q.measure_time && t + 1 == q.inputs.size()) {
        phase = "timing";
        const int64_t working_set =
            data->bytes + static_cast<int64_t>(in_bytes + out_bytes + work.bytes());
        const bool flush = should_flush_l2(q.timing, working_set, device.info().l2_bytes);
        // Every run, warm-up or timed, gets values no earlier run had, so nothing a program keeps
        // across runs can stand in for computing; some runs' outputs go back for verification.
        fresh_inputs fresh(q.inputs[t].size(), q.timed_input_seed);
        checked_runs checks(std::max<int32_t>(2, q.checked_timed_runs), q.timed_input_seed);
        uint64_t runs = 0;
        auto prepare = [&](CUstream s) {
          fresh.enqueue(s, x.get(), runs++);
          poison(s);
        };
        // The latest run's input, output and input buffer, copied on the device after the run
        // (microseconds, outside the timed region); a run is downloaded only once it is kept.
        device_buffer kept_input(in_bytes), kept_y(out_bytes), kept_x(in_bytes);
        auto fill = [&](timed_run_check& c) {
          check(cuStreamSynchronize(stream), "synchronize before keeping a timed run");
          c.input.resize(fresh.values());
          kept_input.download(c.input.data(), "a timed run's input");
          c.output.resize(static_cast<size_t>(q.output_length));
          kept_y.download(c.output.data(), "y");
          kept_x.download(x_back.data(), "x");
          c.input_unchanged = std::memcmp(x_back.data(), c.input.data(), in_bytes) == 0;
        };
        auto keep_latest = [&] {  // the run has finished; outside the timed region
          checks.run_finished(fill);
          fresh.copy_last(stream, kept_input.get());
          check(cuMemcpyDtoDAsync(kept_y.get(), y.get(), out_bytes, stream), "keeping y");
          check(cuMemcpyDtoDAsync(kept_x.get(), x.get(), in_bytes, stream), "keeping x");
        };
        reply.timing = time_on_gpu(stream, q.timing, flush ? &device.l2_flush_buffer() : nullptr,
                                   prepare, launch_all, q.launch_timeout_s, keep_latest);
        reply.checked_runs = checks.take(fill);
        reply.timed = true;
        phase = trial;
      }
      x.upload(q.inputs[t].data(), "x");
      poison(stream);
      launch_all(stream);
      wait_within(stream, q.launch_timeout_s, trial);
      trial_result r;
      r.output.resize(static_cast<size_t>(q.output_length));
      y.download(r.output.data(), "y");
      x.download(x_back.data(), "x");
      r.input_unchanged = std::memcmp(x_back.data(), q.inputs[t].data(), in_bytes) == 0;
      r.format_unchanged = data_cache::unchanged(*data);
      reply.trials.push_back(std::move(r));
    }
  } catch (const cuda_failure& e) {
    return fail(e.what(), context_lost());
  }
  return reply;
}

}  // namespace sparserl::gpu_worker
