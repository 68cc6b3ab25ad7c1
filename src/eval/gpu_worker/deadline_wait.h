#pragma once
// Waiting for the GPU against the per-launch time limit. A kernel that never finishes cannot be
// stopped from the host, and anything that synchronises with it (cuMemFree, cuModuleUnload, the
// destructors on the way out of an exception) would hang too: so on expiry the worker calls the
// installed handler, which writes its `timeout` reply and ends the process; the process exit tears
// the context down, and the parent's pool (eval/gpu_runner) starts a fresh worker.
#include <cuda.h>

#include <string>

namespace sparserl::gpu_worker {

// Called with "timeout after 5 s in trial 2"; must not return (the worker's main installs it).
using timeout_handler = void (*)(const std::string& why);
void set_timeout_handler(timeout_handler handler);

// Polls until the work queued so far on `stream` (or up to `event`) has finished. limit_s <= 0:
// no limit. Throws cuda_failure for an error; calls the timeout handler past the limit.
void wait_within(CUstream stream, double limit_s, const std::string& what);
void wait_within(CUevent event, double limit_s, const std::string& what);

}  // namespace sparserl::gpu_worker
