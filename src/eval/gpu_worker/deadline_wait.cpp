#include "eval/gpu_worker/deadline_wait.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#include "eval/gpu_worker/cuda_check.h"

namespace sparserl::gpu_worker {

namespace {

timeout_handler installed = nullptr;

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", s);
  return buf;
}

// cuStreamQuery / cuEventQuery until done. The first polls spin (short kernels finish within
// microseconds); then 50 us naps keep the host thread from burning a core for long kernels.
void poll_until_done(const std::function<CUresult()>& query, double limit_s,
                     const std::string& what) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  for (int polls = 0;; ++polls) {
    const CUresult r = query();
    if (r == CUDA_SUCCESS) return;
    if (r != CUDA_ERROR_NOT_READY) check(r, what);
    if (limit_s > 0 && std::chrono::duration<double>(clock::now() - start).count() > limit_s) {
      const std::string why = "timeout after " + seconds_text(limit_s) + " s in " + what;
      if (installed) installed(why);
      std::fprintf(stderr, "sparserl-gpu-worker: %s\n", why.c_str());
      std::_Exit(4);  // no handler: still never unwind into a synchronising destructor
    }
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

void set_timeout_handler(timeout_handler handler) { installed = handler; }

void wait_within(CUstream stream, double limit_s, const std::string& what) {
  poll_until_done([stream] { return cuStreamQuery(stream); }, limit_s, what);
}

void wait_within(CUevent event, double limit_s, const std::string& what) {
  poll_until_done([event] { return cuEventQuery(event); }, limit_s, what);
}

}  // namespace sparserl::gpu_worker
