#pragma once
// Learning rate: linear warm-up from 0, then cosine decay to min_ratio * peak (as transformers'
// get_cosine_schedule_with_warmup, with a floor).
#include <cstdint>

namespace sparserl::train {

struct lr_schedule {
  double peak = 3e-4;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  double min_ratio = 0.1;

  // The rate for optimizer step `step` (0-based).
  double at(int64_t step) const;
};

}  // namespace sparserl::train
