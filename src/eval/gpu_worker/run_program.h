#pragma once
// One "run program" request: load the cubin, check each launch against the device, then per trial
// poison the output, upload a fresh input, launch the entries in order, synchronise, copy the
// output back and check that the input and the format arrays are untouched.
//
// With measure_time, the timing protocol runs on the last trial's input just before that trial,
// with the output poisoned before every repetition; the last trial then verifies a launch that is
// indistinguishable from a timed one, so a kernel cannot be right when checked and lazy when timed.
#include "eval/gpu_protocol.h"
#include "eval/gpu_worker/data_cache.h"
#include "eval/gpu_worker/device_context.h"

namespace sparserl::gpu_worker {

gpu_protocol::run_program_reply run_program(device_context& device, data_cache& cache,
                                            const gpu_protocol::run_program_request& request);

}  // namespace sparserl::gpu_worker
