#pragma once
// An owned cuMemAlloc allocation. Never null: empty arrays get a small allocation, so a kernel is
// never handed a null pointer that it might legitimately compare against.
#include <cuda.h>

#include <cstddef>
#include <string>

#include "eval/gpu_worker/cuda_check.h"

namespace sparserl::gpu_worker {

class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(size_t bytes) : bytes_(bytes) {
    check(cuMemAlloc(&ptr_, bytes ? bytes : 256),
          "cuMemAlloc of " + std::to_string(bytes) + " bytes");
  }
  ~device_buffer() {
    if (ptr_) cuMemFree(ptr_);
  }
  device_buffer(device_buffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = 0; }
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  // A pageable cuMemcpyHtoD may return before its DMA lands, and the worker's kernels run on a
  // non-blocking stream that does not wait for the legacy stream's copy: synchronise the context
  // so the next launch sees the data (found as wrong results when 8 workers shared one GPU).
  void upload(const void* src, const std::string& what) {
    if (!bytes_) return;
    check(cuMemcpyHtoD(ptr_, src, bytes_), "upload of " + what);
    check(cuCtxSynchronize(), "synchronize after the upload of " + what);
  }
  void download(void* dst, const std::string& what) const {
    if (bytes_) check(cuMemcpyDtoH(dst, ptr_, bytes_), "download of " + what);
  }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

}  // namespace sparserl::gpu_worker
