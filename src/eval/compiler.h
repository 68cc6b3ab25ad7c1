#pragma once
// NVRTC compilation of untrusted device source to a CUBIN. Each compile runs in a forked child
// with a wall-clock limit and an address-space limit, so a compile bomb (template explosions,
// huge unrolls) is killed and reported instead of stalling or exhausting the trainer; the
// result comes back over a pipe in eval/wire.h framing. No GPU is needed (NVRTC only).
// Callers screen the source first (eval/source_screen.h).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace sparserl {

// The CUDA include directory for the allow-listed headers (cuda_fp16.h, ...): $CUDA_HOME,
// $CUDA_PATH, then /usr/local/cuda; "" when none has include/cuda_fp16.h.
std::string default_cuda_include_dir();

struct compile_options {
  std::string arch = "sm_90";               // --gpu-architecture=<arch>
  double timeout_s = 20;                    // CPU seconds (load-independent); wall: see below
  int64_t memory_bytes = int64_t{2} << 30;  // address space the compile may add
  int64_t max_log_bytes = 64 * 1024;        // the log is cut after this many bytes
  bool lineinfo = false;                    // -lineinfo (profilers map SASS to lines)
  std::vector<std::string> include_dirs = {default_cuda_include_dir()};  // "" entries skipped
};

// The wall-clock backstop for a compile: 3 x timeout_s + 5 s (the limit itself is CPU time).
inline double compile_wall_limit_s(const compile_options& o) {
  return 3 * std::max(0.0, o.timeout_s) + 5;
}

// The exact NVRTC flags for `options` (also part of the cache key).
std::vector<std::string> nvrtc_flags(const compile_options& options);

struct compile_result {
  bool ok = false;
  bool timed_out = false;      // killed at the wall-clock limit
  bool out_of_memory = false;  // the address-space limit was hit
  bool source_error = false;   // NVRTC rejected the source (deterministic, so cacheable)
  std::string error;        // "" when ok; else one line, e.g. "compile error: program.cu(3): ..."
  std::string log;          // NVRTC's log (and the child's stderr on a crash), truncated
  std::vector<char> cubin;  // the ELF image when ok
  double ms = 0;            // wall clock, fork to result
};

// Never throws: every failure is described in the result.
compile_result compile_device_source(const std::string& source,
                                     const compile_options& options = {});

// Compiled images keyed by (source, flags, log limit), least recently used evicted beyond
// max_entries or max_bytes. Thread-safe; concurrent requests for one key compile once. Keeps
// successes and source errors; timeouts, memory and process failures are retried next time.
class compile_cache {
 public:
  using compile_fn = std::function<compile_result(const std::string&, const compile_options&)>;
  explicit compile_cache(size_t max_entries = 4096, int64_t max_bytes = int64_t{512} << 20,
                         compile_fn compile = compile_device_source);

  std::shared_ptr<const compile_result> compile(const std::string& source,
                                                const compile_options& options = {});

  struct stats {
    int64_t hits = 0, misses = 0, compiles = 0;
    size_t entries = 0;
    int64_t bytes = 0;
  };
  stats statistics() const;
  void clear();

 private:
  struct entry;
  using lru_list = std::list<std::string>;  // keys, most recent first
  void insert(const std::string& key, std::shared_ptr<const compile_result> result);

  size_t max_entries_;
  int64_t max_bytes_;
  compile_fn compile_;
  mutable std::mutex mutex_;
  lru_list lru_;
  std::unordered_map<std::string, std::shared_ptr<entry>> entries_;
  stats stats_;
};

}  // namespace sparserl
