#pragma once
// Token sequences -> the tensors of one causal-LM step: right-padded input ids, an attention mask,
// and next-token targets with a 0/1 loss mask, so SFT can score only the program tokens and
// pre-training every token.
#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace sparserl::train {

struct lm_example {
  std::vector<int32_t> ids;
  // Per id: 1 when predicting this id is trained (its target), 0 otherwise. Empty = all 1.
  std::vector<uint8_t> loss_mask;
  int64_t prefix_index = -1;  // which matrix prefix goes in front (-1: none)
};

struct lm_batch {
  torch::Tensor input_ids;       // [b, t] int64, right-padded with pad_id
  torch::Tensor attention_mask;  // [b, p + t] int64 (p = prefix length, ones)
  torch::Tensor targets;         // [b, t - 1] int64: input_ids shifted left
  torch::Tensor loss_mask;       // [b, t - 1] float: 1 where the target is trained
  int64_t trained_tokens = 0;
};

// Sequences longer than max_len are cut at the end. Throws sparserl::error on an empty batch or
// a sequence shorter than 2 tokens.
lm_batch make_lm_batch(const std::vector<lm_example>& examples, int32_t pad_id, int64_t max_len,
                       int64_t prefix_tokens = 0);

// Mean next-token cross entropy over the loss mask. logits [b, p + t, vocab] from the model (the
// first p rows are the prefix's and are skipped).
torch::Tensor lm_loss(const torch::Tensor& logits, const lm_batch& batch, int64_t prefix_tokens);

}  // namespace sparserl::train
