#pragma once
// One "run program" request: load the cubin, check each launch against the device, then per trial
// poison the output, upload a fresh input, launch the entries in order, synchronise, copy the
// output back and check that the input and the format arrays are untouched.
//
// With measure_time, the timing protocol runs just before the last trial. Before every run (warm-up
// or timed), outside the timed region, the input gets fresh values (gpu_worker/fresh_inputs.h)
// and the output is poisoned; after every run its input and output are copied on the device, and
// the reply carries those of the last run and of a random choice of the others
// (eval/checked_runs.h) for the evaluator to verify. A program can neither reuse a result (no input
// repeats) nor be lazy in some runs (it cannot tell which are checked). Every wait is bounded by
// the per-launch limit (gpu_worker/deadline_wait.h).
#include "eval/gpu_protocol.h"
#include "eval/gpu_worker/data_cache.h"
#include "eval/gpu_worker/device_context.h"

namespace sparserl::gpu_worker {

gpu_protocol::run_program_reply run_program(device_context& device, data_cache& cache,
                                            const gpu_protocol::run_program_request& request);

}  // namespace sparserl::gpu_worker
