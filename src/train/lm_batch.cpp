#include "train/lm_batch.h"

#include <torch/nn/functional/loss.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>

#include "sparse/error.h"

namespace sparserl::train {

lm_batch make_lm_batch(const std::vector<lm_example>& examples, int32_t pad_id, int64_t max_len,
                       int64_t prefix_tokens) {
  if (examples.empty()) throw error("lm batch: no examples");
  int64_t t = 0;
  for (size_t i = 0; i < examples.size(); ++i) {
    const auto& e = examples[i];
    if (e.ids.size() < 2)
      throw error("lm batch: example " + std::to_string(i) + " has fewer than 2 tokens");
    if (!e.loss_mask.empty() && e.loss_mask.size() != e.ids.size())
      throw error("lm batch: example " + std::to_string(i) +
                  " has a loss mask of the wrong length");
    t = std::max<int64_t>(t, std::min<int64_t>(max_len, static_cast<int64_t>(e.ids.size())));
  }
  const int64_t b = static_cast<int64_t>(examples.size());
  torch::Tensor ids = torch::full({b, t}, pad_id, torch::kInt64);
  torch::Tensor mask = torch::zeros({b, prefix_tokens + t}, torch::kInt64);
  torch::Tensor trained = torch::zeros({b, t}, torch::kFloat32);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<int64_t, 2>();
  auto trained_a = trained.accessor<float, 2>();
  lm_batch out;
  for (int64_t r = 0; r < b; ++r) {
    const auto& e = examples[r];
    const int64_t n = std::min<int64_t>(t, static_cast<int64_t>(e.ids.size()));
    for (int64_t j = 0; j < prefix_tokens; ++j) mask_a[r][j] = 1;
    for (int64_t j = 0; j < n; ++j) {
      ids_a[r][j] = e.ids[j];
      mask_a[r][prefix_tokens + j] = 1;
      // Position 0 is never a target (nothing before it in the text predicts it here).
      trained_a[r][j] = j > 0 && (e.loss_mask.empty() || e.loss_mask[j]) ? 1.0f : 0.0f;
    }
  }
  out.input_ids = ids;
  out.attention_mask = mask;
  out.targets = ids.slice(1, 1);
  out.loss_mask = trained.slice(1, 1).contiguous();
  out.trained_tokens = static_cast<int64_t>(out.loss_mask.sum().item<float>());
  return out;
}

torch::Tensor lm_loss(const torch::Tensor& logits, const lm_batch& batch, int64_t prefix_tokens) {
  const int64_t t = batch.input_ids.size(1);
  // The logit at text position j predicts token j + 1.
  torch::Tensor predicting = logits.slice(1, prefix_tokens, prefix_tokens + t - 1);
  torch::Tensor mask = batch.loss_mask.to(logits.device());
  torch::Tensor nll = torch::nn::functional::cross_entropy(
      predicting.reshape({-1, predicting.size(-1)}).to(torch::kFloat32),
      batch.targets.to(logits.device()).reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  return (nll * mask.reshape({-1})).sum() / mask.sum().clamp_min(1.0);
}

}  // namespace sparserl::train
