#include "train/rollouts.h"

#include <torch/types.h>

#include <algorithm>

#include "train/ppo_math.h"

namespace sparserl::train {

void lay_out_rollouts(rollouts& r, const std::vector<std::vector<int32_t>>& prompts,
                      int64_t prefix_tokens, int32_t pad_id) {
  const int64_t b = static_cast<int64_t>(prompts.size());
  int64_t t = 1, rmax = 1;
  for (int64_t i = 0; i < b; ++i) {
    const int64_t n = static_cast<int64_t>(r.generations[i].ids.size());
    t = std::max<int64_t>(t, static_cast<int64_t>(prompts[i].size()) + n);
    rmax = std::max<int64_t>(rmax, n);
  }
  r.input_ids = torch::full({b, t}, pad_id, torch::kInt64);
  r.attention_mask = torch::zeros({b, prefix_tokens + t}, torch::kInt64);
  r.resp_pos = torch::zeros({b, rmax}, torch::kInt64);
  r.resp_ids = torch::full({b, rmax}, pad_id, torch::kInt64);
  r.resp_mask = torch::zeros({b, rmax}, torch::kFloat32);
  auto ids = r.input_ids.accessor<int64_t, 2>();
  auto mask = r.attention_mask.accessor<int64_t, 2>();
  auto pos = r.resp_pos.accessor<int64_t, 2>();
  auto rid = r.resp_ids.accessor<int64_t, 2>();
  auto rmask = r.resp_mask.accessor<float, 2>();
  for (int64_t i = 0; i < b; ++i) {
    const auto& prompt = prompts[i];
    const auto& resp = r.generations[i].ids;
    const int64_t lp = static_cast<int64_t>(prompt.size());
    for (int64_t j = 0; j < prefix_tokens; ++j) mask[i][j] = 1;
    for (int64_t j = 0; j < lp; ++j) ids[i][j] = prompt[j];
    for (size_t j = 0; j < resp.size(); ++j) ids[i][lp + static_cast<int64_t>(j)] = resp[j];
    for (int64_t j = 0; j < lp + static_cast<int64_t>(resp.size()); ++j)
      mask[i][prefix_tokens + j] = 1;
    for (int64_t j = 0; j < rmax; ++j) {
      const bool real = j < static_cast<int64_t>(resp.size());
      pos[i][j] = prefix_tokens + lp + (real ? j : 0) - 1;
      rid[i][j] = real ? resp[j] : pad_id;
      rmask[i][j] = real ? 1.0f : 0.0f;
    }
  }
}

response_outputs score_responses(const qwen3_model& model, const value_head* head,
                                 const rollouts& r, const torch::Tensor& rows,
                                 const torch::Tensor& prefix, bool adapters, bool want_entropy) {
  const torch::Device dev = prefix.device();
  qwen3_forward_options fo;
  fo.prefix_embeds = prefix;
  fo.attention_mask = r.attention_mask.index_select(0, rows).to(dev);
  fo.adapters_enabled = adapters;
  torch::Tensor hidden = model.forward_hidden(r.input_ids.index_select(0, rows).to(dev), fo);
  torch::Tensor pos = r.resp_pos.index_select(0, rows).to(dev);
  torch::Tensor picked =
      hidden.gather(1, pos.unsqueeze(-1).expand({pos.size(0), pos.size(1), hidden.size(2)}));
  torch::Tensor logits = model.lm_logits(picked);
  response_outputs out;
  out.logprobs = token_logprobs(logits, r.resp_ids.index_select(0, rows).to(dev));
  if (want_entropy) out.entropy = token_entropy(logits.detach());
  if (head) out.values = head->forward(picked);
  return out;
}

}  // namespace sparserl::train
