#pragma once
// The reward service: the evaluation harness (eval/evaluator.h) behind an HTTP/1.1 JSON API
// (cpp-httplib). docs/reward-service.md is the reference; in short:
//   POST /v1/evaluate  {id?, matrix, op, k, programs} -> {id, matrix, results: [verdict + reward]}
//   GET  /v1/health    liveness and limits (no token needed; 503 while draining)
//   GET  /metrics      Prometheus text (serve/service_metrics.h)
// Each request is parsed and checked on the HTTP thread; its programs then go, all or none, into
// one bounded queue (429 with Retry-After when it has no room) that `workers` threads drain
// through the one shared, thread-safe evaluator. Matrices are cached by content hash
// (serve/matrix_cache.h). stop() closes the listening socket; run() returns once every request
// already admitted has been answered.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "eval/evaluator.h"
#include "serve/evaluate_request.h"
#include "serve/listen_address.h"

namespace sparserl {

struct serve_options {
  int workers = 2;                           // evaluation threads
  int queue_capacity = 256;                  // programs waiting for a thread (--queue)
  size_t max_body_bytes = size_t{32} << 20;  // 413 above
  request_limits request;                    // programs per request (400 above), k, dense sizes
  std::string token;                         // "": no bearer token required
  std::string matrices_dir;                  // "": no registered set
  int64_t matrix_cache_bytes = int64_t{1} << 30;
  int http_threads = 0;          // 0: queue_capacity + workers + 8 (see reward_server.cpp)
  std::string executor = "cpu";  // reported by /v1/health
};

// Throws sparserl::error naming the first inconsistent limit (--threads, --queue, --max-programs
// above --queue, --max-body); the constructor checks the same, this lets the CLI fail early.
void validate_serve_options(const serve_options& options);

class reward_server {
 public:
  // Throws sparserl::error on inconsistent options (--max-programs above --queue, ...) or an
  // unlistable --matrices directory.
  reward_server(evaluator& eval, serve_options options);
  ~reward_server();
  reward_server(const reward_server&) = delete;
  reward_server& operator=(const reward_server&) = delete;

  // Binds and listens (port 0: a free port); returns the port. Throws sparserl::error
  // "--listen <address>: cannot bind (<why>)".
  int bind(const listen_address& address);
  // Serves until stop(); then answers every admitted request and drains the queue. Throws
  // sparserl::error when the listening socket fails.
  void run();
  // Thread-safe, from any thread but a signal handler; idempotent.
  void stop();
  bool draining() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace sparserl
