#pragma once
// Hierarchical reward (DESIGN.md): no program -1, compile error -0.5, fault/timeout/wrong 0,
// correct 1 + clipped log2 speed-up over cuSPARSE - memory penalty (the penalty is clipped too,
// so every correct program scores above every failing one).
#include "eval/verdict.h"

namespace sparserl {

struct reward_config {
  double no_program = -1.0;
  double compile_error = -0.5;
  double runtime_failure = 0.0;  // fault, timeout, wrong result
  double correct = 1.0;
  double speed_weight = 1.0;     // times log2(t_cusparse / t_kernel)
  double speed_clip_high = 2.0;  // speed term <= this (4x faster than cuSPARSE saturates)
  double speed_clip_low =
      0.9;  // speed term >= -this: a slow correct program still beats a wrong one
  double memory_weight = 0.05;  // times log2(footprint / csr footprint) when above 1
  double memory_clip = 0.05;    // with speed_clip_low keeps a correct program above 0
};

// Fills v.reward from the stages, speedup and footprint; csr_footprint_bytes is the CSR size.
double compute_reward(const verdict& v, int64_t csr_footprint_bytes,
                      const reward_config& config = {});

}  // namespace sparserl
