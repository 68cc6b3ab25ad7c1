#include "eval/gpu_worker/fresh_inputs.h"

#include <algorithm>
#include <string>

namespace sparserl::gpu_worker {

namespace {

void check_curand(curandStatus_t s, const std::string& what) {
  if (s != CURAND_STATUS_SUCCESS)
    throw cuda_failure("cuRAND status " + std::to_string(static_cast<int>(s)) + " in " + what);
}

}  // namespace

fresh_inputs::fresh_inputs(size_t values, uint64_t seed)
    : values_(values),
      generated_((values + 1) / 2 * 2),
      values_buffer_(std::max<size_t>(generated_, 2) * sizeof(float)) {
  check_curand(curandCreateGenerator(&generator_, CURAND_RNG_PSEUDO_PHILOX4_32_10),
               "curandCreateGenerator");
  check_curand(curandSetPseudoRandomGeneratorSeed(generator_, seed), "curandSetSeed");
}

fresh_inputs::~fresh_inputs() {
  if (generator_) curandDestroyGenerator(generator_);
}

void fresh_inputs::enqueue(CUstream stream, CUdeviceptr input, uint64_t run) {
  if (values_ == 0) return;
  // CUstream and cudaStream_t name the same object.
  check_curand(curandSetStream(generator_, reinterpret_cast<cudaStream_t>(stream)),
               "curandSetStream");
  check_curand(curandSetGeneratorOffset(generator_, run * generated_), "curandSetGeneratorOffset");
  check_curand(curandGenerateNormal(generator_, reinterpret_cast<float*>(values_buffer_.get()),
                                    generated_, 0.0f, 0.5f),
               "curandGenerateNormal");
  check(cuMemcpyDtoDAsync(input, values_buffer_.get(), values_ * sizeof(float), stream),
        "copying a timed run's input");
}

void fresh_inputs::copy_last(CUstream stream, CUdeviceptr out) const {
  if (values_)
    check(cuMemcpyDtoDAsync(out, values_buffer_.get(), values_ * sizeof(float), stream),
          "keeping a timed run's input");
}

}  // namespace sparserl::gpu_worker
