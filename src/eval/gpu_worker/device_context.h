#pragma once
// The worker's one GPU: its primary context (shared with the runtime, which cuSPARSE uses), one
// non-blocking stream, its attributes (the hello), and lazily the L2 flush buffer and cuSPARSE.
#include <cuda.h>
#include <cusparse.h>

#include <memory>

#include "eval/gpu_protocol.h"
#include "eval/gpu_worker/device_buffer.h"

namespace sparserl::gpu_worker {

class device_context {
 public:
  explicit device_context(int ordinal);  // throws cuda_failure
  ~device_context();
  device_context(const device_context&) = delete;
  device_context& operator=(const device_context&) = delete;

  const device_info& info() const { return info_; }
  CUstream stream() const { return stream_; }
  // 2x the L2 size, written before each timed run whose working set could sit in L2.
  const device_buffer& l2_flush_buffer();
  cusparseHandle_t cusparse();

 private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  device_info info_;
  std::unique_ptr<device_buffer> flush_;
  cusparseHandle_t cusparse_ = nullptr;
};

}  // namespace sparserl::gpu_worker
