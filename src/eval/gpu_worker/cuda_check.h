#pragma once
// CUDA driver and cuSPARSE errors as exceptions whose message starts with the error's name
// ("CUDA_ERROR_ILLEGAL_ADDRESS in trial 2: synchronize after spmv_csr"), the form the parent
// reports as the run's failure.
#include <cuda.h>
#include <cusparse.h>

#include <stdexcept>
#include <string>

namespace sparserl::gpu_worker {

struct cuda_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string result_name(CUresult r);          // "CUDA_ERROR_ILLEGAL_ADDRESS"
std::string status_name(cusparseStatus_t s);  // "CUSPARSE_STATUS_NOT_SUPPORTED"

// Throws cuda_failure("<name> in <what>") unless r is CUDA_SUCCESS.
void check(CUresult r, const std::string& what);
void check(cusparseStatus_t s, const std::string& what);

// True when the current context is unusable (a sticky error such as an illegal address): every
// later call would fail too, so the worker reports and exits for the parent to replace it.
bool context_lost();

}  // namespace sparserl::gpu_worker
