#pragma once
// The record of one program's evaluation: every stage's outcome, logs, times and the reward.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace sparserl {

struct verdict {
  bool extracted = false, compiled = false, ran = false, correct = false;
  std::string failure;      // first failing stage's reason, "" when correct
  std::string compile_log;  // NVRTC's log (truncated to the configured limit)
  std::string executor;     // "gpu" or "cpu"
  int trials = 0;
  int checked_timed_runs = 0;  // timed runs verified against their own fresh input (GPU)
  double max_error_ratio = 0;  // worst |error| / tolerance seen (<= 1 passes)
  double compile_ms = 0;
  // Where an evaluation's wall time went besides compiling (the tuner sums them per matrix):
  // building the format's arrays (0 when cached), the runner (upload, trials, timing) and the
  // host's checks of its outputs against float64 references.
  double prepare_ms = 0, run_ms = 0, check_ms = 0;
  std::optional<double> kernel_ms;    // median, measured; empty on the CPU executor
  std::optional<double> baseline_ms;  // cuSPARSE, same protocol
  std::string baseline_name;  // the fastest correct cuSPARSE algorithm, "cusparseSpMV CSR_ALG2"
  std::string baseline_algorithm;  // that algorithm alone, "CSR_ALG2"
  std::string baseline_skipped;    // algorithms left out and why ("" when none)
  std::string timing_method;       // e.g. "CUDA events, 10 warm-up, median of 50, L2 flushed"
  std::optional<double> speedup;   // baseline_ms / kernel_ms
  int64_t bytes_moved = 0;         // minimum bytes of the format + x + y
  std::optional<double> achieved_gbps;
  int64_t footprint_bytes = 0;  // device bytes of the format's arrays
  double reward = 0;
  bool speed_modelled = false;  // never true for a measured speed term
};

nlohmann::json verdict_to_json(const verdict& v);

}  // namespace sparserl
