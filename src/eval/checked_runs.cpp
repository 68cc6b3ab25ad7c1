#include "eval/checked_runs.h"

#include <algorithm>

namespace sparserl {

checked_runs::checked_runs(int32_t count, uint64_t seed)
    : others_(std::max<int32_t>(0, count - 1)), rng_(seed ^ 0x636865636b656475ull) {}

timed_run_check& checked_runs::next_run() {
  if (have_last_) {
    // Reservoir sampling over the runs before the last: run i (1-based) is kept with probability
    // others / i, replacing a uniformly chosen earlier pick.
    const int32_t i = last_.run;
    if (static_cast<int32_t>(chosen_.size()) < others_) {
      chosen_.push_back(std::move(last_));
    } else if (others_ > 0) {
      const auto j = static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, i - 1)(rng_));
      if (j < others_) std::swap(chosen_[static_cast<size_t>(j)], last_);
      spare_ = std::move(last_);
    } else {
      spare_ = std::move(last_);
    }
    last_ = std::move(spare_);
    spare_ = timed_run_check{};
  }
  have_last_ = true;
  last_.run = ++runs_;
  last_.input_unchanged = true;
  return last_;
}

std::vector<timed_run_check> checked_runs::take() {
  std::vector<timed_run_check> out = std::move(chosen_);
  if (have_last_) out.push_back(std::move(last_));
  std::sort(out.begin(), out.end(),
            [](const timed_run_check& a, const timed_run_check& b) { return a.run < b.run; });
  chosen_.clear();
  have_last_ = false;
  return out;
}

}  // namespace sparserl
