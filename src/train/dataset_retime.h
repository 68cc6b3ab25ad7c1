#pragma once
// Timed labels brought up to date with the expert library. A label timed before a template existed
// (RCSR, BSR 3x3, hubs first, ...) ranks only what existed then, so its "fastest" program may no
// longer be. For each sample labelled by autotune, retime_labels evaluates the candidates of
// today's space (and the heuristic's pick) that its ranking lacks, together with its recorded best
// in the same run, and merges them into the ranking. Times measured now are put on the recorded
// scale, multiplied by (recorded best / best timed now): two runs on one GPU differ by a few
// percent (clocks, the other matrices), and the ranking must compare like with like. The label
// becomes the fastest correct program of the merged ranking; no earlier time is changed.
// Labels by the heuristic and labels whose ranking is complete are left as they are.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "eval/runner.h"
#include "train/sft_data.h"

namespace sparserl::train {

struct retime_options {
  int threads = 1;  // samples at once (the runner's pool bounds the real parallelism)
  bool progress = true;
  // > 0: no sample is started after this many seconds; the ones not reached are left as they
  // were (counted), so a run under a time limit still writes a whole file, and running again on
  // it goes on where this one stopped (retimed labels are then complete).
  double time_limit_s = 0;
};

struct retime_result {
  std::vector<sft_sample> samples;  // the input's, in order, updated
  int64_t retimed = 0;              // samples with new candidates timed and merged
  int64_t relabelled = 0;           // of those, samples whose label changed to a new candidate
  int64_t up_to_date = 0;   // timed labels whose ranking had every candidate of today's space
  int64_t not_timed = 0;    // heuristic labels or no timed candidates: left as they are
  int64_t failed = 0;       // the recorded best no longer ran correctly: left as it was (warning)
  int64_t not_reached = 0;  // timed labels left as they were when time_limit_s ran out
  int64_t new_candidates = 0;         // evaluated over all samples
  std::vector<std::string> warnings;  // one line per sample left as it was for a failure
};

// What retime_labels would time, without a runner: the timed labels, how many already hold every
// candidate of today's space, and the candidates they lack, by template.
struct retime_plan {
  int64_t labels = 0, up_to_date = 0, not_timed = 0, new_candidates = 0;
  std::map<std::string, int64_t> by_template;
};
retime_plan plan_retime(const std::vector<sft_sample>& samples, int threads);

// Why `runner` cannot retime: it measures no kernel time (the CPU emulator). The CLI says it before
// any matrix is remade; retime_labels throws it when a verdict comes back without a time.
std::string retime_timing_error(const program_runner& runner);

// Throws sparserl::error when the runner cannot time (the CPU emulator): a ranking needs times.
retime_result retime_labels(std::vector<sft_sample> samples, program_runner& runner,
                            const eval_options& eval, const retime_options& options);

}  // namespace sparserl::train
