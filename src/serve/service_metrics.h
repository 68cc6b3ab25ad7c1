#pragma once
// What GET /metrics reports, in the Prometheus text exposition format (version 0.0.4):
//   sparserl_http_requests_total{path,status}          counter
//   sparserl_http_request_duration_seconds{path}       histogram (headers read -> response ready)
//   sparserl_programs_evaluated_total                  counter
//   sparserl_verdicts_total{outcome}                   counter (outcomes: verdict_outcome)
//   sparserl_program_duration_seconds                  histogram (one evaluate() call)
//   sparserl_queue_depth, sparserl_queue_capacity, sparserl_programs_running, sparserl_workers,
//   sparserl_matrix_cache_{hits,misses}_total, sparserl_matrix_cache_{entries,bytes},
//   sparserl_draining                                  gauges
// The format is a few lines of text, so it is written here rather than through a client library.
// Thread-safe.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eval/verdict.h"
#include "serve/matrix_cache.h"

namespace sparserl {

// "correct", "wrong_result" (ran, failed verification), "runtime_failure" (fault, timeout, bad
// launch), "compile_error", "rejected" (the source screen), "no_program" (nothing parsable).
const char* verdict_outcome(const verdict& v);

// The path label: the routes this service has, "other" for the rest (bounded cardinality).
std::string metrics_path_label(const std::string& path);

struct service_gauges {
  int queue_depth = 0, queue_capacity = 0, programs_running = 0, workers = 0;
  matrix_cache_stats cache;
  bool draining = false;
};

class latency_histogram {
 public:
  explicit latency_histogram(std::vector<double> upper_bounds);
  void observe(double seconds);
  // Lines "<name>_bucket{<labels>le=...} n", "_sum", "_count"; `labels` is "" or `k="v",`.
  void render(std::string& out, const std::string& name, const std::string& labels) const;
  double sum() const { return sum_; }
  int64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bucket, the last one +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

class service_metrics {
 public:
  service_metrics();

  // `seconds` empty when the request was never timed (malformed before routing).
  void record_request(const std::string& path, int status, std::optional<double> seconds);
  void record_program(const verdict& v, double seconds);
  // Mean seconds per program so far (1 before any): the Retry-After estimate.
  double mean_program_seconds() const;
  std::string render(const service_gauges& gauges) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::map<std::string, latency_histogram> request_seconds_;
  std::map<std::string, int64_t> outcomes_;
  latency_histogram program_seconds_;
  int64_t programs_ = 0;
};

}  // namespace sparserl
