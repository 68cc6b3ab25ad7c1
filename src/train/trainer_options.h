#pragma once
// What every trainer shares: optimisation (AdamW, warm-up + cosine, clipping, accumulation), the
// seed, and where and how often it checkpoints and logs.
#include <cstdint>
#include <string>

#include "train/schedule.h"

namespace sparserl::train {

class data_parallel;

struct optimizer_options {
  double lr = 3e-4;
  int64_t warmup_steps = 0;
  double min_lr_ratio = 0.1;
  double weight_decay = 0.0;
  double beta1 = 0.9, beta2 = 0.999;
  double max_grad_norm = 1.0;  // <= 0: no clipping
};

struct run_options {
  std::string run_dir = "runs/default";  // metrics.jsonl, checkpoints/, final/
  int64_t steps = 100;                   // optimizer steps in the whole run
  uint64_t seed = 0;
  int64_t checkpoint_every = 0;  // 0: only at the end
  int keep_last = 2;
  bool resume = false;  // continue from run_dir's latest complete checkpoint
  bool progress = true;
  // Stop (as if killed) after this many steps of this process; -1: never. For tests and
  // budgeted runs; a later --resume continues the same run.
  int64_t stop_after = -1;
  // The data-parallel group this process trains in (train/data_parallel.h); null: alone.
  data_parallel* parallel = nullptr;
};

inline lr_schedule make_schedule(const optimizer_options& o, int64_t steps) {
  return lr_schedule{o.lr, o.warmup_steps, steps, o.min_lr_ratio};
}

}  // namespace sparserl::train
