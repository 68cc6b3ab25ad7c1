#pragma once
// cuSPARSE's generic API on the task's CSR matrix under the same timing protocol as the programs:
// SpMV with CSR_ALG1 and CSR_ALG2; SpMM (row-major B and C) with CSR_ALG1, CSR_ALG2 and CSR_ALG3.
// Buffer sizing and *_preprocess happen outside the timed region. An algorithm that cuSPARSE
// refuses for the layout comes back with ok = false and the status name, not as a failed request.
#include <vector>

#include "eval/gpu_protocol.h"
#include "eval/gpu_worker/device_context.h"

namespace sparserl::gpu_worker {

std::vector<cusparse_algorithm> run_baseline(device_context& device,
                                             const gpu_protocol::baseline_request& request);

// cuMemcpyDtoD of one `bytes` buffer into another, timed.
timing_summary run_copy_bandwidth(device_context& device,
                                  const gpu_protocol::copy_bandwidth_request& request);

}  // namespace sparserl::gpu_worker
