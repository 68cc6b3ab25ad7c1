#pragma once
// The GPU worker's timing protocol acted out on the CPU emulator, for tests of what sits on top of
// timing (the evaluator's checks of timed runs, label retiming): the timed runs go between the
// second-last and the last trial, in the same child (so module state carries across, as in one
// loaded module on the GPU), each on a fresh input from the request's seed; `checked` of them come
// back (the last always), with a kernel time made up by `time_of` (default 1 ms).
#include <cstddef>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "eval/runner.h"

namespace sparserl {

class timed_cpu_runner : public program_runner {
 public:
  using time_function = std::function<double(const run_request&)>;
  timed_cpu_runner(
      program_runner& inner, int timed_runs, int checked,
      time_function time_of = [](const run_request&) { return 1.0; })
      : inner_(inner), timed_runs_(timed_runs), checked_(checked), time_of_(std::move(time_of)) {}
  const char* name() const override { return "cpu-timed"; }
  run_result run(const run_request& request, const run_limits& limits) override {
    run_request r = request;
    const size_t before = request.inputs.size() - 1;  // trials ahead of the timed runs
    std::mt19937_64 rng(request.timed_input_seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<std::vector<float>> timed;
    for (int t = 0; t < timed_runs_; ++t) {
      timed.emplace_back(request.inputs[0].size());
      for (float& v : timed.back()) v = dist(rng);
    }
    r.inputs.insert(r.inputs.begin() + static_cast<std::ptrdiff_t>(before), timed.begin(),
                    timed.end());
    run_result inner = inner_.run(r, limits);
    if (!inner.ok) return inner;
    run_result out = inner;
    out.trials.clear();
    for (size_t i = 0; i < inner.trials.size(); ++i) {
      const bool is_timed = i >= before && i < before + timed.size();
      if (!is_timed) {
        out.trials.push_back(inner.trials[i]);
        continue;
      }
      const int run = static_cast<int>(i - before) + 1;
      if (run > timed_runs_ - checked_) {  // the last `checked` runs
        const trial_result& t = inner.trials[i];
        out.checked_runs.push_back({run, timed[i - before], t.output, t.input_unchanged});
      }
    }
    out.kernel_ms = time_of_(request);
    out.timing_method = "made up by the test";
    return out;
  }

 private:
  program_runner& inner_;
  int timed_runs_, checked_;
  time_function time_of_;
};

}  // namespace sparserl
