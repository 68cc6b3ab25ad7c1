#include "eval/reward.h"

#include <algorithm>
#include <cmath>

namespace sparserl {

double compute_reward(const verdict& v, int64_t csr_footprint_bytes, const reward_config& c) {
  if (!v.extracted) return c.no_program;
  if (!v.compiled) return c.compile_error;
  if (!v.ran || !v.correct) return c.runtime_failure;
  double reward = c.correct;
  // Only a measured speed-up earns the speed term; the CPU emulator has none.
  if (v.speedup && *v.speedup > 0) {
    const double term = c.speed_weight * std::log2(*v.speedup);
    reward += std::clamp(term, -c.speed_clip_low, c.speed_clip_high);
  }
  if (csr_footprint_bytes > 0 && v.footprint_bytes > csr_footprint_bytes) {
    const double excess = std::log2(static_cast<double>(v.footprint_bytes) / csr_footprint_bytes);
    reward -= std::min(c.memory_clip, c.memory_weight * excess);
  }
  return reward;
}

}  // namespace sparserl
