#pragma once
// Which timed runs the GPU worker returns for verification (CUDA-free, tested on any machine):
// always the last (against a program that turns lazy after N launches), and a uniform random choice
// of the others (reservoir sampling, since the timing protocol decides the number of runs as it
// goes). A run's data is copied out only once it is kept, after the run and the next one have
// finished, so nothing a program sees while it runs tells whether that run will be checked.
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "eval/runner.h"

namespace sparserl {

class checked_runs {
 public:
  // Fills a kept run's record (input, output, input_unchanged) from the caller's copy of that
  // run's data, which must still hold the run named in the record.
  using fill_fn = std::function<void(timed_run_check&)>;

  checked_runs(int32_t count, uint64_t seed);  // count >= 1 runs in all, the last included

  // A run has finished. If the run before it joins the random choice, `fill` gets its record now,
  // while the caller's copy still holds it; then the finished run becomes the last. Returns the
  // finished run's number.
  int32_t run_finished(const fill_fn& fill);
  // The kept runs in run order; `fill` gets the last run's record.
  std::vector<timed_run_check> take(const fill_fn& fill);

 private:
  int32_t others_;  // how many besides the last
  std::mt19937_64 rng_;
  int32_t runs_ = 0;
  std::vector<timed_run_check> chosen_;
};

}  // namespace sparserl
