#include "eval/gpu_worker/device_context.h"

namespace sparserl::gpu_worker {

namespace {

int attribute(CUdevice d, CUdevice_attribute a, const char* name) {
  int v = 0;
  check(cuDeviceGetAttribute(&v, a, d), std::string("cuDeviceGetAttribute(") + name + ")");
  return v;
}

}  // namespace

device_context::device_context(int ordinal) {
  check(cuInit(0), "cuInit");
  int count = 0;
  check(cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw cuda_failure("CUDA_ERROR_INVALID_DEVICE: device " + std::to_string(ordinal) +
                       " requested, " + std::to_string(count) + " visible");
  check(cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  // Device printf lands in the worker's stderr (the parent's bounded log); keep its buffer small.
  check(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 64 * 1024), "cuCtxSetLimit(printf)");
  check(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

  info_.ok = true;
  info_.ordinal = ordinal;
  char name[256] = {};
  check(cuDeviceGetName(name, sizeof(name) - 1, device_), "cuDeviceGetName");
  info_.name = name;
  check(cuDriverGetVersion(&info_.driver_version), "cuDriverGetVersion");
  size_t total = 0;
  check(cuDeviceTotalMem(&total, device_), "cuDeviceTotalMem");
  info_.total_memory = static_cast<int64_t>(total);
  info_.cc_major = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc major");
  info_.cc_minor = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc minor");
  info_.sm_count = attribute(device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  info_.l2_bytes = attribute(device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size");
  info_.max_shared_per_block =
      attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared per block");
  info_.max_shared_optin =
      attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared opt-in");
  info_.max_threads_per_block =
      attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block");
  info_.max_grid_x = attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "grid x");
  info_.max_grid_y = attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "grid y");
  info_.max_grid_z = attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "grid z");
}

device_context::~device_context() {
  if (cusparse_) cusparseDestroy(cusparse_);
  flush_.reset();
  if (stream_) cuStreamDestroy(stream_);
  if (context_) cuDevicePrimaryCtxRelease(device_);
}

const device_buffer& device_context::l2_flush_buffer() {
  if (!flush_) flush_ = std::make_unique<device_buffer>(static_cast<size_t>(2 * info_.l2_bytes));
  return *flush_;
}

cusparseHandle_t device_context::cusparse() {
  if (!cusparse_) {
    check(cusparseCreate(&cusparse_), "cusparseCreate");
    check(cusparseSetStream(cusparse_, stream_), "cusparseSetStream");
  }
  return cusparse_;
}

}  // namespace sparserl::gpu_worker
