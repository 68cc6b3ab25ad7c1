#pragma once
// Causal-LM training of the policy: pre-training on a code corpus (every token scored) and SFT
// (matrix prefix in front, only the program tokens scored). Mini-batches of whole sequences,
// gradient accumulation, AdamW with warm-up + cosine, clipping; seeded data order; checkpoints
// that resume bit-for-bit; metrics.jsonl per step.
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/matrix_encoding.h"
#include "train/lm_batch.h"
#include "train/policy.h"
#include "train/trainer_options.h"

namespace sparserl::train {

struct lm_dataset {
  std::vector<lm_example> train, val;
  // Indexed by lm_example::prefix_index; empty for text-only data (pre-training).
  std::vector<matrix_encoding> prefixes;
};

struct lm_train_options {
  run_options run;
  optimizer_options optim;
  int64_t batch_size = 4;
  int64_t grad_accum = 1;
  int64_t max_len = 1024;
  int64_t eval_every = 0;    // validation loss every N steps (0: at the end only)
  std::string kind = "sft";  // "pretrain" or "sft": the metrics' and progress bar's name
};

struct lm_train_result {
  int64_t steps_done = 0;
  double first_train_loss = 0, last_train_loss = 0;
  double first_val_loss = -1, last_val_loss = -1;  // -1 without validation data
};

lm_train_result train_lm(policy& p, const lm_dataset& data, const lm_train_options& options);

// The mean next-token loss of `examples` as one batch, with the graph (each example's matrix prefix
// from `data`): what an SFT step backpropagates, and PPO's SFT anchor (train/trainer_ppo.h).
torch::Tensor lm_examples_loss(const policy& p, const lm_dataset& data,
                               const std::vector<lm_example>& examples, int64_t max_len);

// Mean loss over `examples` (no grad), batched; with `parallel`, the ranks share the batches.
double evaluate_lm(const policy& p, const lm_dataset& data, const std::vector<lm_example>& examples,
                   int64_t batch_size, int64_t max_len, data_parallel* parallel = nullptr);

}  // namespace sparserl::train
