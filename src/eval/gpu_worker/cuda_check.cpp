#include "eval/gpu_worker/cuda_check.h"

namespace sparserl::gpu_worker {

std::string result_name(CUresult r) {
  const char* name = nullptr;
  if (cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
  return "CUresult " + std::to_string(static_cast<int>(r));
}

std::string status_name(cusparseStatus_t s) {
  const char* name = cusparseGetErrorName(s);
  return name ? name : "cusparseStatus " + std::to_string(static_cast<int>(s));
}

void check(CUresult r, const std::string& what) {
  if (r != CUDA_SUCCESS) throw cuda_failure(result_name(r) + " in " + what);
}

void check(cusparseStatus_t s, const std::string& what) {
  if (s != CUSPARSE_STATUS_SUCCESS) throw cuda_failure(status_name(s) + " in " + what);
}

bool context_lost() { return cuCtxSynchronize() != CUDA_SUCCESS; }

}  // namespace sparserl::gpu_worker
