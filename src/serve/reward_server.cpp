#include "serve/reward_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <optional>
#include <thread>

#include "serve/bearer_token.h"
#include "serve/evaluation_queue.h"
#include "serve/matrix_cache.h"
#include "serve/registered_matrices.h"
#include "serve/service_metrics.h"
#include "sparse/error.h"
#include "sparse/matrix_market.h"

namespace sparserl {

namespace {

using nlohmann::json;
using clock_type = std::chrono::steady_clock;

// cpp-httplib listens with a backlog of 5; RL engines open many connections at once, and a full
// backlog drops SYNs (the client retries a second later, which shows as p99 latency). Linux lets
// listen() be called again on a listening socket to raise it.
class wide_backlog_server : public httplib::Server {
 public:
  void widen_backlog(int backlog) { ::listen(svr_sock_, backlog); }
};

// A fault of the service rather than of the request: answered as 500.
struct server_fault : error {
  using error::error;
};

// When the current request's headers were read: set by the pre-routing handler and read by the
// post-routing handler, both on the thread that serves the request.
thread_local std::optional<clock_type::time_point> request_start;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump(body), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, {{"error", message}});
}

// What the library itself answers (404, 413 on Content-Length, 400 on a bad request line) gets a
// JSON body like every other error.
std::string library_error_message(const httplib::Request& req, const httplib::Response& res,
                                  size_t max_body) {
  if (res.status == 404) return "no route for " + req.method + " " + req.path;
  if (res.status == 413)
    return "request body larger than " + std::to_string(max_body) + " bytes (--max-body)";
  return "HTTP status " + std::to_string(res.status);
}

}  // namespace

struct reward_server::impl {
  enum class run_state { idle, listening, finished };

  impl(evaluator& e, serve_options o)
      : eval(e),
        options(std::move(o)),
        auth(options.token),
        registered(options.matrices_dir.empty() ? registered_matrices()
                                                : registered_matrices(options.matrices_dir)),
        matrices(options.matrix_cache_bytes),
        queue(options.workers, options.queue_capacity) {}

  void install_routes();
  void evaluate(const httplib::Request& req, httplib::Response& res,
                const httplib::ContentReader& read);
  void health(httplib::Response& res);
  void metrics_page(const httplib::Request& req, httplib::Response& res);

  bool read_body(const httplib::ContentReader& read, httplib::Response& res, std::string& body);
  void reject_unauthorized(const httplib::ContentReader* read, httplib::Response& res);
  std::shared_ptr<const cached_matrix> resolve_matrix(const evaluate_request& r);
  int retry_after_seconds() const;
  service_gauges gauges() const;
  json answer(const evaluate_request& r, const cached_matrix& m,
              std::vector<std::future<verdict>>& futures);

  evaluator& eval;
  serve_options options;
  bearer_check auth;
  registered_matrices registered;
  matrix_cache matrices;
  service_metrics metrics;
  evaluation_queue queue;
  wide_backlog_server http;
  std::atomic<bool> draining{false};
  std::atomic<int64_t> next_id{1};
  std::mutex state_mutex;
  run_state state = run_state::idle;
};

void reward_server::impl::install_routes() {
  http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    request_start = clock_type::now();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Runs before the response is written, so a client that reads /metrics after its response
  // sees its own request counted.
  http.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    std::optional<double> seconds;
    if (request_start) seconds = seconds_since(*request_start);
    request_start.reset();
    metrics.record_request(req.path, res.status, seconds);
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) {
        if (res.body.empty())
          send_error(res, res.status, library_error_message(req, res, options.max_body_bytes));
        return httplib::Server::HandlerResponse::Handled;
      }));
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        send_error(res, 500, "internal error: " + what);
      });
  http.Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) { health(res); });
  http.Get("/metrics",
           [this](const httplib::Request& req, httplib::Response& res) { metrics_page(req, res); });
  http.Post("/v1/evaluate",
            [this](const httplib::Request& req, httplib::Response& res,
                   const httplib::ContentReader& read) { evaluate(req, res, read); });
}

bool reward_server::impl::read_body(const httplib::ContentReader& read, httplib::Response& res,
                                    std::string& body) {
  bool too_large = false;
  const bool ok = read([&](const char* data, size_t n) {
    // Content-Length above the limit is refused by the library (413, the body skipped unread);
    // this guards chunked bodies, which carry no length up front. Past the limit the rest is read
    // and dropped, as the library does, so the 413 reaches a client that is still sending.
    too_large = too_large || body.size() + n > options.max_body_bytes;
    if (too_large) {
      body = std::string();
    } else {
      body.append(data, n);
    }
    return true;
  });
  if (ok && !too_large) return true;
  if (too_large || res.status == 413)
    send_error(res, 413,
               "request body larger than " + std::to_string(options.max_body_bytes) +
                   " bytes (--max-body)");
  else
    send_error(res, 400, "could not read the request body (connection closed or timed out)");
  return false;
}

void reward_server::impl::reject_unauthorized(const httplib::ContentReader* read,
                                              httplib::Response& res) {
  // The body is read and dropped (bounded by --max-body), so the 401 reaches a client that is
  // still sending rather than being lost to a reset connection.
  if (read) {
    size_t seen = 0;
    (*read)([&](const char*, size_t n) { return (seen += n) <= options.max_body_bytes; });
  }
  res.set_header("WWW-Authenticate", "Bearer realm=\"sparserl\"");
  send_error(res, 401, "missing or wrong bearer token (send \"Authorization: Bearer <token>\")");
}

std::shared_ptr<const cached_matrix> reward_server::impl::resolve_matrix(
    const evaluate_request& r) {
  if (r.matrix_name.empty()) {
    const std::string key = content_key(r.matrix);
    return matrices.get_or_build(key, [&] { return make_cached(build_csr(r.matrix), key); });
  }
  const std::optional<std::string> path = registered.path_of(r.matrix_name);
  if (!path)
    throw error("matrix.name \"" + r.matrix_name + "\": not in the registered set (" +
                std::to_string(registered.size()) + " matrices" +
                (registered.dir().empty() ? std::string(", no --matrices given")
                                          : " in " + registered.dir()) +
                ")");
  return matrices.get_or_build("registered:" + r.matrix_name, [&] {
    try {
      csr_matrix csr = read_matrix_market(*path);
      std::string id = csr_content_id(csr);
      return make_cached(std::move(csr), std::move(id));
    } catch (const error& e) {
      throw server_fault("registered matrix \"" + r.matrix_name + "\": " + e.what());
    }
  });
}

int reward_server::impl::retry_after_seconds() const {
  // The time the work ahead takes the threads, at the mean program time so far, within 1..60 s.
  const double ahead = queue.queued() + queue.running();
  const double seconds = ahead * metrics.mean_program_seconds() / queue.workers();
  return static_cast<int>(std::clamp(std::ceil(seconds), 1.0, 60.0));
}

json reward_server::impl::answer(const evaluate_request& r, const cached_matrix& m,
                                 std::vector<std::future<verdict>>& futures) {
  json results = json::array();
  for (size_t i = 0; i < futures.size(); ++i) {
    verdict v;
    try {
      v = futures[i].get();
    } catch (const std::exception& e) {
      throw server_fault("evaluating programs[" + std::to_string(i) + "]: " + e.what());
    }
    json item = verdict_to_json(v);
    item["index"] = i;
    item["outcome"] = verdict_outcome(v);
    results.push_back(std::move(item));
  }
  json matrix = {{"id", m.id}, {"rows", m.csr.rows}, {"cols", m.csr.cols}, {"nnz", m.csr.nnz()}};
  if (!r.matrix_name.empty()) matrix["name"] = r.matrix_name;
  const json id = r.id.is_null() ? json("srv-" + std::to_string(next_id++)) : r.id;
  return {{"id", id}, {"op", op_name(r.op)}, {"k", r.k}, {"matrix", matrix}, {"results", results}};
}

void reward_server::impl::evaluate(const httplib::Request& req, httplib::Response& res,
                                   const httplib::ContentReader& read) {
  if (!auth.allows(req.get_header_value("Authorization"))) return reject_unauthorized(&read, res);
  std::string body;
  if (!read_body(read, res, body)) return;
  try {
    auto request =
        std::make_shared<const evaluate_request>(parse_evaluate_request(body, options.request));
    body = std::string();  // the parsed form is all that is needed from here
    std::shared_ptr<const cached_matrix> matrix = resolve_matrix(*request);
    if (!request->matrix_name.empty())
      check_dense_size(matrix->csr.rows, matrix->csr.cols, request->k, options.request);

    std::vector<std::future<verdict>> futures;
    std::vector<evaluation_queue::job> jobs;
    for (size_t i = 0; i < request->programs.size(); ++i) {
      auto task = std::make_shared<std::packaged_task<verdict()>>([this, request, matrix, i] {
        const auto t0 = clock_type::now();
        const eval_task t{request->op, &matrix->csr, request->k, matrix->id};
        verdict v = eval.evaluate(t, request->programs[i]);
        metrics.record_program(v, seconds_since(t0));
        return v;
      });
      futures.push_back(task->get_future());
      jobs.push_back([task] { (*task)(); });  // a throw lands in the future
    }
    if (!queue.try_submit(std::move(jobs))) {
      res.set_header("Retry-After", std::to_string(retry_after_seconds()));
      return send_error(res, draining ? 503 : 429,
                        draining ? "shutting down: not accepting new work"
                                 : "queue full: " + std::to_string(queue.queued()) + " of " +
                                       std::to_string(queue.capacity()) +
                                       " places taken, this request needs " +
                                       std::to_string(request->programs.size()));
    }
    send_json(res, 200, answer(*request, *matrix, futures));
  } catch (const server_fault& e) {
    send_error(res, 500, e.what());
  } catch (const error& e) {
    send_error(res, 400, e.what());
  }
}

service_gauges reward_server::impl::gauges() const {
  service_gauges g;
  g.queue_depth = queue.queued();
  g.queue_capacity = queue.capacity();
  g.programs_running = queue.running();
  g.workers = queue.workers();
  g.cache = matrices.stats();
  g.draining = draining;
  return g;
}

void reward_server::impl::health(httplib::Response& res) {
  const service_gauges g = gauges();
  send_json(res, draining ? 503 : 200,
            {{"status", draining ? "draining" : "ok"},
             {"version", SPARSERL_VERSION},
             {"executor", options.executor},
             {"workers", g.workers},
             {"queue_depth", g.queue_depth},
             {"queue_capacity", g.queue_capacity},
             {"programs_running", g.programs_running},
             {"max_programs", options.request.max_programs},
             {"max_body_bytes", options.max_body_bytes},
             {"registered_matrices", registered.size()},
             {"token_required", auth.required()}});
}

void reward_server::impl::metrics_page(const httplib::Request& req, httplib::Response& res) {
  if (!auth.allows(req.get_header_value("Authorization"))) return reject_unauthorized(nullptr, res);
  res.set_content(metrics.render(gauges()), "text/plain; version=0.0.4; charset=utf-8");
}

void validate_serve_options(const serve_options& options) {
  if (options.workers < 1) throw error("--threads must be at least 1");
  if (options.queue_capacity < 1) throw error("--queue must be at least 1");
  if (options.request.max_programs < 1) throw error("--max-programs must be at least 1");
  if (options.request.max_programs > options.queue_capacity)
    throw error("--max-programs " + std::to_string(options.request.max_programs) +
                " is above --queue " + std::to_string(options.queue_capacity) +
                ": such a request could never be queued");
  if (options.max_body_bytes < 1) throw error("--max-body must be at least 1 byte");
}

reward_server::reward_server(evaluator& eval, serve_options options) {
  validate_serve_options(options);
  impl_ = std::make_unique<impl>(eval, std::move(options));
  const serve_options& o = impl_->options;
  // A handler thread waits while its request has a program queued or running, so at most
  // queue + workers threads wait; the rest answer health, metrics and 429s without delay.
  const int threads = o.http_threads > 0 ? o.http_threads : o.queue_capacity + o.workers + 8;
  impl_->http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  impl_->http.set_payload_max_length(o.max_body_bytes);
  impl_->http.set_keep_alive_max_count(1000);
  impl_->install_routes();
}

reward_server::~reward_server() = default;

int reward_server::bind(const listen_address& address) {
  errno = 0;
  const int port = address.port == 0
                       ? impl_->http.bind_to_any_port(address.host)
                       : (impl_->http.bind_to_port(address.host, address.port) ? address.port : -1);
  if (port < 0)
    throw error("--listen " + address.to_string() + ": cannot bind (" +
                (errno ? std::strerror(errno) : "unknown reason") + ")");
  impl_->http.widen_backlog(SOMAXCONN);
  return port;
}

void reward_server::run() {
  {
    std::lock_guard<std::mutex> lock(impl_->state_mutex);
    impl_->state = impl::run_state::listening;
  }
  const bool ok = impl_->draining ? true : impl_->http.listen_after_bind();
  {
    std::lock_guard<std::mutex> lock(impl_->state_mutex);
    impl_->state = impl::run_state::finished;
  }
  // The library joined its threads, each of which waited for its request's programs: every
  // admitted program has run, and the queue closes empty.
  impl_->queue.close();
  if (!ok && !impl_->draining) throw error("serve: the listening socket failed");
}

void reward_server::stop() {
  if (impl_->draining.exchange(true)) return;
  // The library's stop() does nothing until its accept loop is running; wait for that when
  // run() is on its way in.
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(impl_->state_mutex);
      if (impl_->state != impl::run_state::listening) return;
    }
    if (impl_->http.is_running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->http.stop();
}

bool reward_server::draining() const { return impl_->draining; }

}  // namespace sparserl
