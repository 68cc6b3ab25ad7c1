#pragma once
// One decode step of generate(): a token per sequence in, the next-token logits out, the KV cache
// and positions advanced. Three ways to run it, same results:
//   growing     the cache grows by one position per step and the mask by one column (eager);
//   fixed       the cache and mask have their final size from the start, the new token is written
//               at a device-side slot (qwen3_kv_cache::slot) and attention reads every slot under
//               the mask; still eager, but every step launches the same kernels on the same shapes;
//   cuda_graph  the fixed step captured once as a CUDA graph and replayed: one launch per step
//               instead of ~60 per layer, which is what bounds eager decoding of a large model
//               (host dispatch, not memory bandwidth). Needs a CUDA build of LibTorch.
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "model/qwen3.h"

namespace sparserl {

enum class decode_mode { automatic, growing, fixed, cuda_graph };

// "auto", "growing", "fixed", "cuda_graph"; throws sparserl::error naming the valid ones.
decode_mode parse_decode_mode(const std::string& text);
std::string to_string(decode_mode mode);

// The mode `automatic` means on `device`: cuda_graph on a CUDA device when this build's LibTorch
// has CUDA, growing otherwise.
decode_mode resolve_decode_mode(decode_mode mode, torch::Device device);

// Whether this build can capture CUDA graphs (LibTorch built with CUDA).
bool cuda_graphs_built();

class decode_stepper {
 public:
  virtual ~decode_stepper() = default;
  // Feeds `token` [batch] (int64, on the model's device) at each sequence's next position and
  // returns that position's fp32 logits [batch, vocab]. The returned tensor may be overwritten by
  // the next call: read it (sample) first.
  virtual torch::Tensor step(const torch::Tensor& token) = 0;
};

// A stepper continuing after a prefill of `cache` (reserved for every position the steps reach)
// whose attention mask was `prefill_mask` [batch, width]. `mode` must be resolved (not
// automatic); cuda_graph throws when the build lacks CUDA or the model is not on a CUDA device.
// A cuda_graph stepper makes a side stream current for its lifetime (graphs cannot be captured
// on the default stream) and synchronises it when destroyed.
std::unique_ptr<decode_stepper> make_decode_stepper(decode_mode mode, const qwen3_model& model,
                                                    qwen3_kv_cache& cache,
                                                    const torch::Tensor& prefill_mask);

namespace decode_detail {
// The fixed stepper, which the CUDA-graph one captures (decode_graph.cpp).
std::unique_ptr<decode_stepper> make_fixed_stepper(const qwen3_model& model, qwen3_kv_cache& cache,
                                                   const torch::Tensor& prefill_mask);
std::unique_ptr<decode_stepper> make_graph_stepper(const qwen3_model& model, qwen3_kv_cache& cache,
                                                   const torch::Tensor& prefill_mask);
}  // namespace decode_detail

}  // namespace sparserl
