#pragma once
// The pieces every trainer loop shares: the AdamW optimizer over the trainable tensors, the
// scheduled learning rate, gradient clipping, and resuming from the run's latest checkpoint.
#include <torch/optim/adamw.h>
#include <torch/types.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "train/checkpoint.h"
#include "train/trainer_options.h"

namespace sparserl::train {

struct optimizer_state {
  std::map<std::string, torch::Tensor> named;  // what is checkpointed, by name
  std::vector<torch::Tensor> params;           // the same tensors, in name order
  std::unique_ptr<torch::optim::AdamW> adamw;
};

optimizer_state make_optimizer(std::map<std::string, torch::Tensor> named,
                               const optimizer_options& options);

void set_learning_rate(torch::optim::AdamW& adamw, double lr);

// Clips the gradients' global L2 norm to max_norm (when > 0); returns the norm before clipping.
double clip_gradients(const std::vector<torch::Tensor>& params, double max_norm);

struct resume_point {
  int64_t step = 0;
  nlohmann::json state = nlohmann::json::object();
};

// With run.resume and a complete checkpoint in RUN/checkpoints, loads it into the optimizer and
// the trainable tensors and returns its step and state; otherwise step 0. Throws when --resume is
// given but the checkpoint is corrupt.
resume_point resume_if_asked(const run_options& run, checkpoint_store& store, optimizer_state& opt);

// The trainer's scalars for a checkpoint: `state` plus the optimizer-independent bookkeeping.
void save_checkpoint(checkpoint_store& store, int64_t step, optimizer_state& opt,
                     const nlohmann::json& state);

}  // namespace sparserl::train
