#include "serve/service_metrics.h"

#include <cstdio>

namespace sparserl {

namespace {

const std::vector<double> request_buckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                             1,     2.5,  5,     10,   30,  60,   120};
const char* const outcomes[] = {"correct",       "wrong_result", "runtime_failure",
                                "compile_error", "rejected",     "no_program"};

std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void gauge(std::string& out, const char* name, const char* help, int64_t value) {
  header(out, name, "gauge", help);
  out += std::string(name) + " " + std::to_string(value) + "\n";
}

void counter(std::string& out, const char* name, const char* help, int64_t value) {
  header(out, name, "counter", help);
  out += std::string(name) + " " + std::to_string(value) + "\n";
}

}  // namespace

const char* verdict_outcome(const verdict& v) {
  if (!v.extracted) return "no_program";
  if (!v.compiled) return v.failure.rfind("rejected:", 0) == 0 ? "rejected" : "compile_error";
  if (!v.ran) return "runtime_failure";
  if (!v.correct) return "wrong_result";
  return "correct";
}

std::string metrics_path_label(const std::string& path) {
  if (path == "/v1/evaluate" || path == "/v1/health" || path == "/metrics") return path;
  return "other";
}

latency_histogram::latency_histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void latency_histogram::observe(double seconds) {
  size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += seconds;
  ++count_;
}

void latency_histogram::render(std::string& out, const std::string& name,
                               const std::string& labels) const {
  int64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    out += name + "_bucket{" + labels + "le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  const std::string braces = labels.empty() ? "" : "{" + labels.substr(0, labels.size() - 1) + "}";
  out += name + "_sum" + braces + " " + number(sum_) + "\n";
  out += name + "_count" + braces + " " + std::to_string(count_) + "\n";
}

service_metrics::service_metrics() : program_seconds_(request_buckets) {
  for (const char* o : outcomes) outcomes_[o] = 0;
}

void service_metrics::record_request(const std::string& path, int status,
                                     std::optional<double> seconds) {
  const std::string label = metrics_path_label(path);
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{label, status}];
  if (!seconds) return;
  auto it = request_seconds_.find(label);
  if (it == request_seconds_.end())
    it = request_seconds_.emplace(label, latency_histogram(request_buckets)).first;
  it->second.observe(*seconds);
}

void service_metrics::record_program(const verdict& v, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++programs_;
  ++outcomes_[verdict_outcome(v)];
  program_seconds_.observe(seconds);
}

double service_metrics::mean_program_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return program_seconds_.count() ? program_seconds_.sum() / program_seconds_.count() : 1.0;
}

std::string service_metrics::render(const service_gauges& g) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  header(out, "sparserl_http_requests_total", "counter",
         "HTTP requests answered, by path and status.");
  for (const auto& [key, n] : requests_)
    out += "sparserl_http_requests_total{path=\"" + key.first + "\",status=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
  header(out, "sparserl_http_request_duration_seconds", "histogram",
         "Seconds from a request's headers to its response, by path.");
  for (const auto& [path, h] : request_seconds_)
    h.render(out, "sparserl_http_request_duration_seconds", "path=\"" + path + "\",");
  counter(out, "sparserl_programs_evaluated_total", "Programs evaluated.", programs_);
  header(out, "sparserl_verdicts_total", "counter", "Verdicts by outcome.");
  for (const auto& [outcome, n] : outcomes_)
    out += "sparserl_verdicts_total{outcome=\"" + outcome + "\"} " + std::to_string(n) + "\n";
  header(out, "sparserl_program_duration_seconds", "histogram", "Seconds to evaluate one program.");
  program_seconds_.render(out, "sparserl_program_duration_seconds", "");
  gauge(out, "sparserl_queue_depth", "Programs waiting for an evaluation thread.", g.queue_depth);
  gauge(out, "sparserl_queue_capacity", "Programs the queue holds (--queue).", g.queue_capacity);
  gauge(out, "sparserl_programs_running", "Programs being evaluated now.", g.programs_running);
  gauge(out, "sparserl_workers", "Evaluation threads (--workers).", g.workers);
  counter(out, "sparserl_matrix_cache_hits_total", "Requests whose matrix was cached.",
          g.cache.hits);
  counter(out, "sparserl_matrix_cache_misses_total", "Requests whose matrix was built.",
          g.cache.misses);
  gauge(out, "sparserl_matrix_cache_entries", "Matrices cached.", g.cache.entries);
  gauge(out, "sparserl_matrix_cache_bytes", "CSR bytes of the cached matrices.", g.cache.bytes);
  gauge(out, "sparserl_draining", "1 once a shutdown signal came (the queue drains).", g.draining);
  return out;
}

}  // namespace sparserl
