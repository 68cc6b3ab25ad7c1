#pragma once
// One PPO step's rollouts (sampled programs) laid out for the forward passes: [prefix | prompt +
// response] right-padded; response token r of row i is predicted by the logits at position
// resp_pos[i][r]. And the scoring of their response tokens under a model (log-probs, entropy,
// values).
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "model/generate.h"
#include "model/qwen3.h"
#include "model/value_head.h"

namespace sparserl::train {

struct rollouts {
  std::vector<int64_t> task_index;  // the task of each row
  std::vector<int64_t> group;       // rows sampled for the same task in this step share a group
  std::vector<generation> generations;
  torch::Tensor input_ids, attention_mask, resp_pos, resp_ids, resp_mask;
  torch::Tensor prefix;  // [b, p, hidden], no grad

  int64_t size() const { return static_cast<int64_t>(generations.size()); }
};

// Fills the tensors of `r` from its generations and their prompts (CPU tensors).
void lay_out_rollouts(rollouts& r, const std::vector<std::vector<int32_t>>& prompts,
                      int64_t prefix_tokens, int32_t pad_id);

struct response_outputs {
  torch::Tensor logprobs, values, entropy;  // [rows, t]; values and entropy when asked
};

// Log-probs (and values, when a head is given; entropy when asked) of the response tokens of rows
// `rows`, with `prefix` their prefix embeddings on the model's device.
response_outputs score_responses(const qwen3_model& model, const value_head* head,
                                 const rollouts& r, const torch::Tensor& rows,
                                 const torch::Tensor& prefix, bool adapters, bool want_entropy);

}  // namespace sparserl::train
