#include "model/decode_step.h"

#include <torch/types.h>
#include <torch/utils.h>

#include "sparse/error.h"

namespace sparserl {

namespace {

// Each step appends a column of ones to the mask and a position to the cache (concatenation, or a
// write into the reserved store).
class growing_stepper : public decode_stepper {
 public:
  growing_stepper(const qwen3_model& model, qwen3_kv_cache& cache, const torch::Tensor& mask)
      : model_(model), mask_(mask), positions_(mask.sum(1, /*keepdim=*/true)) {
    options_.cache = &cache;
  }

  torch::Tensor step(const torch::Tensor& token) override {
    mask_ = torch::cat({mask_, torch::ones({mask_.size(0), 1}, mask_.options())}, 1);
    options_.attention_mask = mask_;
    options_.position_ids = positions_;
    torch::Tensor logits = model_.forward(token.unsqueeze(1), options_).select(1, -1);
    positions_ = positions_ + 1;
    return logits;
  }

 private:
  const qwen3_model& model_;
  torch::Tensor mask_, positions_;  // [batch, seen], [batch, 1] the next token's position
  qwen3_forward_options options_;
};

// The mask has the cache's capacity from the start; each step marks the slot it writes, and the
// slot and positions advance on the device, so a step never changes a shape or reads the host.
class fixed_stepper : public decode_stepper {
 public:
  fixed_stepper(const qwen3_model& model, qwen3_kv_cache& cache, const torch::Tensor& mask)
      : model_(model), cache_(cache) {
    const int64_t width = mask.size(1);
    if (cache.length() != width || cache.capacity <= width)
      throw error("decode_stepper: the fixed mode needs a prefilled cache of " +
                  std::to_string(width) + " positions reserved for more (holds " +
                  std::to_string(cache.length()) + ", capacity " + std::to_string(cache.capacity) +
                  ")");
    mask_ = torch::zeros({mask.size(0), cache.capacity}, mask.options());
    mask_.narrow(1, 0, width).copy_(mask);
    positions_ = mask.sum(1, /*keepdim=*/true);
    cache.slot = torch::full({1}, width, mask.options().dtype(torch::kInt64));
    options_.cache = &cache;
    options_.attention_mask = mask_;
    options_.position_ids = positions_;
  }

  torch::Tensor step(const torch::Tensor& token) override {
    mask_.index_fill_(1, cache_.slot, 1);
    torch::Tensor logits = model_.forward(token.view({-1, 1}), options_).select(1, -1);
    cache_.slot.add_(1);
    positions_.add_(1);
    return logits;
  }

 private:
  const qwen3_model& model_;
  qwen3_kv_cache& cache_;
  torch::Tensor mask_, positions_;  // [batch, capacity], [batch, 1]
  qwen3_forward_options options_;
};

}  // namespace

decode_mode parse_decode_mode(const std::string& text) {
  if (text == "auto") return decode_mode::automatic;
  if (text == "growing") return decode_mode::growing;
  if (text == "fixed") return decode_mode::fixed;
  if (text == "cuda_graph") return decode_mode::cuda_graph;
  throw error("decode mode '" + text + "' is not one of auto, growing, fixed, cuda_graph");
}

std::string to_string(decode_mode mode) {
  switch (mode) {
    case decode_mode::automatic:
      return "auto";
    case decode_mode::growing:
      return "growing";
    case decode_mode::fixed:
      return "fixed";
    case decode_mode::cuda_graph:
      return "cuda_graph";
  }
  return "?";
}

decode_mode resolve_decode_mode(decode_mode mode, torch::Device device) {
  if (mode != decode_mode::automatic) return mode;
  return device.is_cuda() && cuda_graphs_built() ? decode_mode::cuda_graph : decode_mode::growing;
}

namespace decode_detail {
std::unique_ptr<decode_stepper> make_fixed_stepper(const qwen3_model& model, qwen3_kv_cache& cache,
                                                   const torch::Tensor& prefill_mask) {
  return std::make_unique<fixed_stepper>(model, cache, prefill_mask);
}
}  // namespace decode_detail

std::unique_ptr<decode_stepper> make_decode_stepper(decode_mode mode, const qwen3_model& model,
                                                    qwen3_kv_cache& cache,
                                                    const torch::Tensor& prefill_mask) {
  switch (mode) {
    case decode_mode::growing:
      return std::make_unique<growing_stepper>(model, cache, prefill_mask);
    case decode_mode::fixed:
      return decode_detail::make_fixed_stepper(model, cache, prefill_mask);
    case decode_mode::cuda_graph:
      return decode_detail::make_graph_stepper(model, cache, prefill_mask);
    case decode_mode::automatic:
      break;
  }
  throw error("make_decode_stepper: resolve the decode mode first");
}

}  // namespace sparserl
