#include "eval/timing_policy.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sparse/error.h"

namespace sparserl {

namespace {

std::string format_number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

void validate_timing_options(const timing_options& o) {
  auto fail = [](const std::string& what) { throw error("timing options: " + what); };
  if (o.warmup < 0) fail("warmup must be >= 0, got " + std::to_string(o.warmup));
  if (o.min_reps < 1) fail("min_reps must be >= 1, got " + std::to_string(o.min_reps));
  if (o.max_reps < o.min_reps)
    fail("max_reps (" + std::to_string(o.max_reps) + ") must be >= min_reps (" +
         std::to_string(o.min_reps) + ")");
  if (!(o.min_total_ms >= 0)) fail("min_total_ms must be >= 0");
  if (!(o.max_wall_s > 0)) fail("max_wall_s must be > 0");
}

bool should_flush_l2(const timing_options& o, int64_t working_set_bytes, int64_t l2_bytes) {
  switch (o.flush) {
    case l2_flush_mode::always:
      return l2_bytes > 0;
    case l2_flush_mode::never:
      return false;
    case l2_flush_mode::automatic:
      break;
  }
  return l2_bytes > 0 && working_set_bytes < 2 * l2_bytes;
}

bool need_more_warmup(const timing_options& o, int32_t done, double wall_s) {
  return done < o.warmup && wall_s < o.max_wall_s;
}

bool need_more_reps(const timing_options& o, int32_t reps, double total_ms, double wall_s) {
  if (reps < 1) return true;  // always at least one timed run, even past the wall limit
  if (reps >= o.max_reps || wall_s >= o.max_wall_s) return false;
  return reps < o.min_reps || total_ms < o.min_total_ms;
}

timing_summary summarize_times(std::vector<double> ms, const timing_options& o, bool l2_flushed) {
  if (ms.empty()) throw error("timing: no timed repetitions to summarize");
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  timing_summary s;
  s.reps = static_cast<int32_t>(n);
  s.min_ms = ms.front();
  s.median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  const size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  s.p90_ms = ms[std::max<size_t>(rank, 1) - 1];
  s.l2_flushed = l2_flushed;
  const double total = std::accumulate(ms.begin(), ms.end(), 0.0);
  s.method = "CUDA events, " + std::to_string(o.warmup) + " warm-up, median of " +
             std::to_string(n) + " (>= " + format_number(o.min_total_ms) + " ms)";
  if (static_cast<int32_t>(n) < o.min_reps || total < o.min_total_ms)
    s.method += static_cast<int32_t>(n) >= o.max_reps
                    ? ", stopped at " + std::to_string(o.max_reps) + " runs"
                    : ", cut at the " + format_number(o.max_wall_s) + " s limit";
  s.method += l2_flushed ? ", L2 flushed" : ", L2 not flushed";
  return s;
}

}  // namespace sparserl
