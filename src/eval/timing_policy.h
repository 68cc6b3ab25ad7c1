#pragma once
// The timing protocol shared by generated kernels and cuSPARSE (the GPU worker runs it with CUDA
// events, eval/gpu_worker/timing.cpp). This part has no CUDA in it, so its rules are tested on any
// machine: W warm-up runs, then repetitions until both N runs and min_total_ms are reached (at most
// max_reps, and the whole measurement within max_wall_s), reporting median, min and p90. When the
// working set (format arrays + x + y) is below 2x the L2 size, L2 is flushed before every timed run
// (outside the events), so a small matrix is not timed from a warm cache.
#include <cstdint>
#include <string>
#include <vector>

namespace sparserl {

enum class l2_flush_mode : int32_t { automatic, always, never };

struct timing_options {
  int32_t warmup = 5;
  // 30 runs and 5 ms: timing is exclusive per GPU, so its cost bounds the pool's programs/s; at
  // 20 ms a 10 us kernel needed ~2000 flushed runs (~0.15 s), at 5 ms about a quarter of that.
  int32_t min_reps = 30;
  int32_t max_reps = 1000;
  double min_total_ms = 5;
  double max_wall_s = 10;  // a slow (but correct) kernel stops early instead of stalling the pool
  l2_flush_mode flush = l2_flush_mode::automatic;
};

struct timing_summary {
  double median_ms = 0, min_ms = 0, p90_ms = 0;
  int32_t reps = 0;
  bool l2_flushed = false;
  std::string method;  // "CUDA events, 5 warm-up, median of 20 (>= 20 ms), L2 flushed"
};

// Throws sparserl::error naming the bad field.
void validate_timing_options(const timing_options& options);

bool should_flush_l2(const timing_options& options, int64_t working_set_bytes, int64_t l2_bytes);

// The loop's rules. `wall_s` counts from the first warm-up run.
bool need_more_warmup(const timing_options& options, int32_t done, double wall_s);
bool need_more_reps(const timing_options& options, int32_t reps, double total_ms, double wall_s);

// Median (mean of the middle two for an even count), min, p90 (nearest rank) and the method
// string. Throws sparserl::error on an empty sample.
timing_summary summarize_times(std::vector<double> ms, const timing_options& options,
                               bool l2_flushed);

}  // namespace sparserl
