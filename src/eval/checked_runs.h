#pragma once
// Which timed runs the GPU worker returns for verification (CUDA-free, tested on any machine):
// always the last (against a program that turns lazy after N launches), and a uniform random choice
// of the others (reservoir sampling, since the timing protocol decides the number of runs as it
// goes). Every run's output is copied out after the run whether or not it is kept, so the program
// cannot tell the checked runs from the rest.
#include <cstdint>
#include <random>
#include <vector>

#include "eval/runner.h"

namespace sparserl {

class checked_runs {
 public:
  checked_runs(int32_t count, uint64_t seed);  // count >= 1 runs in all, the last included

  // The finished run's record, to be filled by the caller (input, output, input_unchanged); the
  // previous run's record then joins the random choice or is dropped.
  timed_run_check& next_run();
  // The kept runs in run order.
  std::vector<timed_run_check> take();

 private:
  int32_t others_;  // how many besides the last
  std::mt19937_64 rng_;
  int32_t runs_ = 0;
  bool have_last_ = false;
  timed_run_check last_;
  std::vector<timed_run_check> chosen_;
  timed_run_check spare_;  // a dropped record, reused for its buffers
};

}  // namespace sparserl
