#pragma once
// The timing protocol of eval/timing_policy.h on the GPU, one function for generated kernels and
// cuSPARSE alike: per repetition, `prepare` (poisoning outputs) and the optional L2 flush are
// enqueued outside the events, then `work` between two CUDA events on the worker's stream; each
// repetition is synchronised and checked, so a fault during timing is reported like any other.
#include <cuda.h>

#include <functional>

#include "eval/gpu_worker/device_buffer.h"
#include "eval/timing_policy.h"

namespace sparserl::gpu_worker {

using enqueue_fn = std::function<void(CUstream)>;
using run_done_fn = std::function<void()>;

// `l2_flush` null: no flush. Throws cuda_failure (its message names the phase). launch_limit_s
// > 0: every repetition must finish within it, else the worker reports a timeout and exits
// (gpu_worker/deadline_wait.h). `after_run`, when set, is called once each run (warm-up or timed)
// has finished, outside the timed region: run_program keeps the outputs to verify there.
timing_summary time_on_gpu(CUstream stream, const timing_options& options,
                           const device_buffer* l2_flush, const enqueue_fn& prepare,
                           const enqueue_fn& work, double launch_limit_s = 0,
                           const run_done_fn& after_run = {});

}  // namespace sparserl::gpu_worker
