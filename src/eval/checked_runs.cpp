#include "eval/checked_runs.h"

#include <algorithm>

namespace sparserl {

checked_runs::checked_runs(int32_t count, uint64_t seed)
    : others_(std::max<int32_t>(0, count - 1)), rng_(seed ^ 0x636865636b656475ull) {}

int32_t checked_runs::run_finished(const fill_fn& fill) {
  if (runs_ > 0 && others_ > 0) {
    // Reservoir sampling over the runs before the last: run i (1-based) is kept with probability
    // others / i, replacing a uniformly chosen earlier pick.
    const int32_t i = runs_;
    timed_run_check* slot = nullptr;
    if (static_cast<int32_t>(chosen_.size()) < others_) {
      slot = &chosen_.emplace_back();
    } else {
      const auto j = static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, i - 1)(rng_));
      if (j < others_) slot = &chosen_[static_cast<size_t>(j)];
    }
    if (slot) {
      slot->run = i;
      slot->input_unchanged = true;
      fill(*slot);
    }
  }
  return ++runs_;
}

std::vector<timed_run_check> checked_runs::take(const fill_fn& fill) {
  std::vector<timed_run_check> out = std::move(chosen_);
  chosen_.clear();
  if (runs_ > 0) {
    timed_run_check& last = out.emplace_back();
    last.run = runs_;
    fill(last);
  }
  std::sort(out.begin(), out.end(),
            [](const timed_run_check& a, const timed_run_check& b) { return a.run < b.run; });
  runs_ = 0;
  return out;
}

}  // namespace sparserl
