#include "eval/gpu_worker/timing.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "eval/gpu_worker/deadline_wait.h"

namespace sparserl::gpu_worker {

namespace {

class event {
 public:
  event() { check(cuEventCreate(&e_, CU_EVENT_DEFAULT), "cuEventCreate"); }
  ~event() { cuEventDestroy(e_); }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  CUevent get() const { return e_; }

 private:
  CUevent e_ = nullptr;
};

// Writing 2x the L2 size evicts whatever the previous run left there.
void flush_l2(CUstream stream, const device_buffer& buffer, uint32_t round) {
  check(cuMemsetD32Async(buffer.get(), round, buffer.bytes() / 4, stream), "L2 flush");
}

// Workers of a pool verify concurrently, but time one at a time per GPU: a kernel timed while
// another process's kernel shares the SMs would be measured slow. An flock on a per-device file
// serialises the timed section across processes and is released by the kernel if the holder dies.
class device_timing_lock {
 public:
  device_timing_lock() {
    CUdevice device = 0;
    cuCtxGetDevice(&device);
    const std::string path = "/tmp/sparserl-gpu-timing-" + std::to_string(device) + "-" +
                             std::to_string(getuid()) + ".lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);  // no lock file: time anyway, unserialised
  }
  ~device_timing_lock() {
    if (fd_ >= 0) ::close(fd_);
  }
  device_timing_lock(const device_timing_lock&) = delete;
  device_timing_lock& operator=(const device_timing_lock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

timing_summary time_on_gpu(CUstream stream, const timing_options& o, const device_buffer* l2_flush,
                           const enqueue_fn& prepare, const enqueue_fn& work, double launch_limit_s,
                           const run_done_fn& after_run) {
  const device_timing_lock exclusive;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto wall_s = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  uint32_t round = 0;
  auto before_run = [&] {
    prepare(stream);
    if (l2_flush) flush_l2(stream, *l2_flush, ++round);
  };

  for (int32_t done = 0; need_more_warmup(o, done, wall_s()); ++done) {
    before_run();
    work(stream);
    wait_within(stream, launch_limit_s, "timing warm-up run " + std::to_string(done + 1));
    if (after_run) after_run();
  }
  event start, stop;
  std::vector<double> times;
  double total_ms = 0;
  while (need_more_reps(o, static_cast<int32_t>(times.size()), total_ms, wall_s())) {
    before_run();
    check(cuEventRecord(start.get(), stream), "cuEventRecord");
    work(stream);
    check(cuEventRecord(stop.get(), stream), "cuEventRecord");
    wait_within(stop.get(), launch_limit_s, "timed run " + std::to_string(times.size() + 1));
    float ms = 0;
    check(cuEventElapsedTime(&ms, start.get(), stop.get()), "cuEventElapsedTime");
    times.push_back(ms);
    total_ms += ms;
    if (after_run) after_run();
  }
  return summarize_times(std::move(times), o, l2_flush != nullptr);
}

}  // namespace sparserl::gpu_worker
