#pragma once
// The GPU executor: a pool of sparserl-gpu-worker processes (eval/gpu_worker/), each bound to one
// GPU, that run NVRTC cubins through the CUDA driver API. This side links no CUDA library, so the
// sparserl library and CLI load on machines without a driver; only the worker does.
//
// Thread-safe: run() takes an idle worker (blocking until one is free), sends the request and waits
// under a wall-clock watchdog. A worker that times out, crashes or loses its CUDA context is
// killed, reaped and replaced, and the run fails with the reason ("timeout after 8 s",
// "worker crashed: signal 11 (Segmentation fault)", "CUDA_ERROR_ILLEGAL_ADDRESS ..."). Format
// arrays are uploaded once per worker and kept, keyed by run_request::data_id (LRU, bounded).
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "eval/gpu_protocol.h"
#include "eval/runner.h"
#include "eval/timing_policy.h"
#include "eval/worker_process.h"

namespace sparserl {

struct gpu_runner_options {
  // The worker binary: this path, else $SPARSERL_GPU_WORKER, else sparserl-gpu-worker next to the
  // running executable, else the one in this build tree.
  std::string worker_path;
  // Test hook: run this command as the worker instead (e.g. {"/bin/sh", "-c", "exit 3"}).
  std::vector<std::string> worker_command;
  std::vector<std::string> worker_env;  // "KEY=VALUE" added to the workers' environment
  std::vector<int> devices = {0};       // CUDA device ordinals (as this process sees them)
  int workers_per_device = 1;
  double start_timeout_s = 60;  // from spawn to the worker's hello (CUDA initialisation)
  double timeout_margin_s = 5;  // added to every watchdog for module load, copies, replies
  // How long a worker that closed its connection gets to exit before it is killed (its own exit
  // status is reported only when it exits in time).
  double exit_wait_s = 10;
  int64_t cache_bytes = int64_t{8} << 30;  // format arrays each worker keeps uploaded
  timing_options timing;
};

class gpu_runner : public program_runner {
 public:
  // Throws sparserl::error when the worker binary cannot be found. Workers start lazily.
  explicit gpu_runner(gpu_runner_options options = {});
  ~gpu_runner() override;

  const char* name() const override { return "gpu"; }
  run_result run(const run_request& request, const run_limits& limits) override;

  // cuSPARSE: the fastest of the algorithms baseline_all() times and verifies; the others' reasons
  // for being skipped (not supported for the shape, wrong result) in the result's `skipped`.
  std::optional<baseline_result> baseline(const baseline_request& request) override;
  // Every algorithm with its timing and output. An empty `input` draws one (uniform [-1, 1],
  // fixed seed), returned in the result.
  cusparse_timings baseline_all(const baseline_request& request, std::vector<float> input = {});
  // cuMemcpyDtoD of a `bytes` buffer under the same timing protocol.
  bandwidth_result copy_bandwidth(int64_t bytes = int64_t{1} << 30);
  // The hello of one worker (starting it if needed): ok = false with the reason when no GPU.
  device_info device();

  int pool_size() const { return static_cast<int>(slots_.size()); }
  int workers_started() const;  // processes spawned so far (replacements included)
  const gpu_runner_options& options() const { return options_; }

  // Where the worker binary is, by the rule above; throws sparserl::error naming where it looked.
  static std::string find_worker(const std::string& explicit_path = "");

 private:
  struct slot;
  class lease;

  lease acquire();
  void release(slot& s);
  std::string spawn(slot& s);           // starts the process if there is none; "" or why not
  std::string ensure_started(slot& s);  // spawned and its hello read: "" when ready, else why not
  void replace(slot& s);                // kill, reap, forget its uploads
  std::string ensure_loaded(slot& s, const std::string& key, const format_arguments& args,
                            double timeout_s, int64_t max_log_bytes, std::string& log);
  // Sends one request and waits for its reply; on failure returns the reason and replaces the
  // worker.
  std::string exchange(slot& s, const std::vector<char>& request, std::vector<char>& reply,
                       double timeout_s, int64_t max_log_bytes, std::string& log);
  // One attempt at a program: start, upload, run; "" or why it failed.
  std::string run_once(slot& s, const run_request& request, const run_limits& limits,
                       std::vector<char>& reply, std::string& log);

  gpu_runner_options options_;
  std::vector<std::string> command_;
  std::vector<std::unique_ptr<slot>> slots_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  int started_ = 0;
};

}  // namespace sparserl
