// The CUDA-graph decode stepper. Compiled for real only against a CUDA build of LibTorch
// (SPARSERL_TORCH_CUDA, set by src/model/CMakeLists.txt); elsewhere it reports that it is absent.
#include <torch/types.h>

#include "model/decode_step.h"
#include "sparse/error.h"

#if SPARSERL_TORCH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

#include <optional>
#endif

namespace sparserl {

#if SPARSERL_TORCH_CUDA

bool cuda_graphs_built() { return true; }

namespace {

// Step 1 runs the fixed step eagerly (the warm-up capture needs: cuBLAS handles and workspaces,
// allocator blocks); step 2 captures the same step (capturing runs nothing) and replays it; every
// later step only copies the token into the graph's input and replays.
class graph_stepper : public decode_stepper {
 public:
  graph_stepper(const qwen3_model& model, qwen3_kv_cache& cache, const torch::Tensor& mask)
      : fixed_(decode_detail::make_fixed_stepper(model, cache, mask)),
        token_(torch::zeros({mask.size(0)}, mask.options().dtype(torch::kInt64))) {
    // The prefill ran on the default stream; capture must not, so everything after moves to a
    // side stream once the device is idle.
    torch::cuda::synchronize();
    stream_.emplace(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, mask.device().index()));
  }

  ~graph_stepper() override { stream_->current_stream().synchronize(); }

  torch::Tensor step(const torch::Tensor& token) override {
    token_.copy_(token);
    if (steps_++ == 0) return fixed_->step(token_);
    if (!logits_.defined()) {
      graph_.capture_begin();
      logits_ = fixed_->step(token_);
      graph_.capture_end();
    }
    graph_.replay();
    return logits_;
  }

 private:
  std::unique_ptr<decode_stepper> fixed_;
  torch::Tensor token_, logits_;  // the graph's input and output
  std::optional<c10::cuda::CUDAStreamGuard> stream_;
  at::cuda::CUDAGraph graph_;
  int64_t steps_ = 0;
};

}  // namespace

namespace decode_detail {
std::unique_ptr<decode_stepper> make_graph_stepper(const qwen3_model& model, qwen3_kv_cache& cache,
                                                   const torch::Tensor& prefill_mask) {
  if (!prefill_mask.device().is_cuda())
    throw error("decode_stepper: the cuda_graph mode needs the model on a CUDA device, not " +
                prefill_mask.device().str());
  return std::make_unique<graph_stepper>(model, cache, prefill_mask);
}
}  // namespace decode_detail

#else

bool cuda_graphs_built() { return false; }

namespace decode_detail {
std::unique_ptr<decode_stepper> make_graph_stepper(const qwen3_model&, qwen3_kv_cache&,
                                                   const torch::Tensor&) {
  throw error(
      "decode_stepper: the cuda_graph mode needs a CUDA build of LibTorch; this one "
      "has none (use growing or fixed)");
}
}  // namespace decode_detail

#endif

}  // namespace sparserl
