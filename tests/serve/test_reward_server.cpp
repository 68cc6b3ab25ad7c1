// The reward service in-process on an ephemeral loopback port, driven by httplib::Client, on the
// CPU emulator: every reward tier, each refusal (400, 401, 413, 429), the metrics that move, the
// registered set, and a graceful stop that still answers the queued requests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <condition_variable>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "eval/cpu_runner.h"
#include "serve/reward_server.h"
#include "sparse/generators.h"
#include "sparse/matrix_market.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

const char* csr_signature =
    "extern \"C\" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ "
    "row_ptr, const int* __restrict__ col_idx, const float* __restrict__ values, const float* "
    "__restrict__ x, float* __restrict__ y)";

std::string csr_program(const std::string& last_line) {
  return std::string("FORMAT: CSR\nLAUNCH: block=128 rows_per_block=128\n```cuda\n") +
         csr_signature + R"( {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) s += values[i] * x[col_idx[i]];
  )" + last_line +
         "\n}\n```\n";
}

const std::string good_program = csr_program("y[row] = s;");
const std::string wrong_program = csr_program("y[row] = s + 1.0f;");
const std::string broken_program = csr_program("y[row] = s  // missing semicolon\n  y[0] = 0;");
const std::string prose = "I would write a CSR kernel with one thread per row.";

csr_matrix test_matrix() {
  generator_spec spec;
  spec.family = "random";
  spec.rows = 300;
  spec.density = 0.02;
  spec.seed = 7;
  return generate_matrix(spec);
}

// The SFT JSONL layout: coordinate lists of the nonzeros and the shape.
json inline_json(const csr_matrix& a, bool with_values) {
  json rows = json::array(), cols = json::array(), values = json::array();
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) {
      rows.push_back(r);
      cols.push_back(a.col_idx[i]);
      values.push_back(a.values[i]);
    }
  json m = {{"rows", rows}, {"cols", cols}, {"shape", {a.rows, a.cols}}};
  if (with_values) m["values"] = values;
  return m;
}

json request_body(const std::vector<std::string>& programs, const std::string& id = "r") {
  return {{"id", id}, {"matrix", inline_json(test_matrix(), true)}, {"programs", programs}};
}

// Delegates to the CPU runner once the test opens the gate, so a test can hold programs "running"
// and know exactly what is queued behind them. A gate left shut (a failed assertion) opens by
// itself after two minutes, so a failing test ends instead of hanging.
class gated_runner : public program_runner {
 public:
  explicit gated_runner(program_runner& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  run_result run(const run_request& request, const run_limits& limits) override {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ++entered_;
      changed_.notify_all();
      changed_.wait_for(lock, std::chrono::seconds(120), [this] { return open_; });
    }
    return inner_.run(request, limits);
  }
  bool wait_entered(int n) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(120), [&] { return entered_ >= n; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  program_runner& inner_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int entered_ = 0;
  bool open_ = false;
};

// A reward_server serving on a free loopback port from its own thread.
class live_server {
 public:
  live_server(evaluator& eval, serve_options options) : server_(eval, std::move(options)) {
    port_ = server_.bind({"127.0.0.1", 0});
    thread_ = std::thread([this] {
      try {
        server_.run();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "run: " << e.what();
      }
    });
  }
  ~live_server() { stop_and_join(); }
  void stop() { server_.stop(); }
  void stop_and_join() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(300, 0);
    return c;
  }
  int port() const { return port_; }

 private:
  reward_server server_;
  int port_ = 0;
  std::thread thread_;
};

struct reply {
  int status = -1;  // -1: no HTTP response at all
  json body;
  std::string retry_after;
};

reply post(const live_server& s, const std::string& body, const httplib::Headers& headers = {}) {
  auto c = s.client();
  const httplib::Result r = c->Post("/v1/evaluate", headers, body, "application/json");
  reply out;
  if (!r) return out;
  out.status = r->status;
  out.body = json::parse(r->body, nullptr, false);
  out.retry_after = r->get_header_value("Retry-After");
  return out;
}

reply post(const live_server& s, const json& body, const httplib::Headers& headers = {}) {
  return post(s, body.dump(), headers);
}

std::string get_text(const live_server& s, const std::string& path,
                     const httplib::Headers& headers = {}, int* status = nullptr) {
  auto c = s.client();
  const httplib::Result r = c->Get(path.c_str(), headers);
  if (status) *status = r ? r->status : -1;
  return r ? r->body : "";
}

// Polls /v1/health until `queue_depth` programs wait (a bounded wait, not a timing assertion).
bool wait_for_queue_depth(const live_server& s, int depth) {
  for (int i = 0; i < 12000; ++i) {
    const json h = json::parse(get_text(s, "/v1/health"), nullptr, false);
    if (h.is_object() && h.value("queue_depth", -1) == depth) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class reward_server_test : public ::testing::Test {
 protected:
  serve_options options(int workers = 2) const {
    serve_options o;
    o.workers = workers;
    o.queue_capacity = 16;
    o.request.max_programs = 8;
    o.max_body_bytes = 1 << 20;
    return o;
  }
  cpu_runner cpu_;
  evaluator eval_{cpu_};
};

TEST_F(reward_server_test, health_reports_the_limits) {
  live_server s(eval_, options());
  int status = 0;
  const json h = json::parse(get_text(s, "/v1/health", {}, &status));
  EXPECT_EQ(status, 200);
  EXPECT_EQ(h["status"], "ok");
  EXPECT_EQ(h["executor"], "cpu");
  EXPECT_EQ(h["workers"], 2);
  EXPECT_EQ(h["queue_capacity"], 16);
  EXPECT_EQ(h["max_programs"], 8);
  EXPECT_EQ(h["token_required"], false);
}

TEST_F(reward_server_test, every_reward_tier_in_one_request) {
  live_server s(eval_, options());
  const reply r = post(s, request_body({good_program, wrong_program, broken_program, prose}, "t1"));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["id"], "t1");
  EXPECT_EQ(r.body["op"], "spmv");
  EXPECT_EQ(r.body["matrix"]["rows"], 300);
  const json& results = r.body["results"];
  ASSERT_EQ(results.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(results[i]["index"], i);

  EXPECT_TRUE(results[0]["correct"].get<bool>()) << results[0]["failure"];
  EXPECT_EQ(results[0]["outcome"], "correct");
  EXPECT_EQ(results[0]["executor"], "cpu");
  EXPECT_EQ(results[0]["trials"], 3);
  EXPECT_TRUE(results[0]["kernel_ms"].is_null());  // the emulator claims no time
  EXPECT_DOUBLE_EQ(results[0]["reward"].get<double>(), 1.0);

  EXPECT_EQ(results[1]["outcome"], "wrong_result");
  EXPECT_THAT(results[1]["failure"].get<std::string>(), HasSubstr("wrong result"));
  EXPECT_DOUBLE_EQ(results[1]["reward"].get<double>(), 0.0);

  EXPECT_EQ(results[2]["outcome"], "compile_error");
  EXPECT_DOUBLE_EQ(results[2]["reward"].get<double>(), -0.5);

  EXPECT_EQ(results[3]["outcome"], "no_program");
  EXPECT_DOUBLE_EQ(results[3]["reward"].get<double>(), -1.0);
}

TEST_F(reward_server_test, pattern_matrices_and_spmm) {
  live_server s(eval_, options());
  // No values: the pattern rule (sparse/pattern_values.h). Any k; the program only has to be
  // right for that matrix.
  json body = {{"matrix", inline_json(test_matrix(), false)},
               {"op", "spmm"},
               {"k", 4},
               {"programs", {prose}}};
  const reply r = post(s, body);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["k"], 4);
  EXPECT_EQ(r.body["op"], "spmm");
  EXPECT_EQ(r.body["id"].get<std::string>().rfind("srv-", 0), 0u);  // none sent: one assigned
}

TEST_F(reward_server_test, bad_requests_are_400_with_one_message) {
  live_server s(eval_, options());
  const reply bad_json = post(s, std::string("{\"matrix\": "));
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_THAT(bad_json.body["error"].get<std::string>(), HasSubstr("not valid JSON"));

  json body = request_body({prose});
  body["matrix"]["cols"][0] = 5000;
  const reply bad_matrix = post(s, body);
  EXPECT_EQ(bad_matrix.status, 400);
  EXPECT_THAT(bad_matrix.body["error"].get<std::string>(), HasSubstr("matrix.cols[0]: 5000"));
  EXPECT_EQ(bad_matrix.body.size(), 1u);  // {"error": ...} and nothing else

  const reply too_many = post(s, request_body(std::vector<std::string>(9, prose)));
  EXPECT_EQ(too_many.status, 400);
  EXPECT_THAT(too_many.body["error"].get<std::string>(), HasSubstr("at most 8 per request"));

  const reply unknown = post(s, json{{"matrix", {{"name", "cant"}}}, {"programs", {prose}}});
  EXPECT_EQ(unknown.status, 400);
  EXPECT_THAT(unknown.body["error"].get<std::string>(), HasSubstr("not in the registered set"));

  int status = 0;
  const json missing = json::parse(get_text(s, "/v2/evaluate", {}, &status));
  EXPECT_EQ(status, 404);
  EXPECT_THAT(missing["error"].get<std::string>(), HasSubstr("no route for GET /v2/evaluate"));
}

TEST_F(reward_server_test, the_token_is_required_when_configured) {
  serve_options o = options();
  o.token = "abc-123";
  live_server s(eval_, o);
  const json body = request_body({prose});
  const reply none = post(s, body);
  EXPECT_EQ(none.status, 401);
  EXPECT_THAT(none.body["error"].get<std::string>(), HasSubstr("bearer token"));
  EXPECT_EQ(post(s, body, {{"Authorization", "Bearer abc-12"}}).status, 401);
  EXPECT_EQ(post(s, body, {{"Authorization", "abc-123"}}).status, 401);
  const reply ok = post(s, body, {{"Authorization", "Bearer abc-123"}});
  EXPECT_EQ(ok.status, 200) << ok.body.dump();

  int status = 0;
  get_text(s, "/metrics", {}, &status);
  EXPECT_EQ(status, 401);
  get_text(s, "/metrics", {{"Authorization", "Bearer abc-123"}}, &status);
  EXPECT_EQ(status, 200);
  get_text(s, "/v1/health", {}, &status);
  EXPECT_EQ(status, 200);  // liveness probes need no secret
}

TEST_F(reward_server_test, bodies_over_the_limit_are_413) {
  serve_options o = options();
  o.max_body_bytes = 2048;
  live_server s(eval_, o);
  const reply big = post(s, request_body({std::string(4096, 'x')}));
  EXPECT_EQ(big.status, 413);
  EXPECT_THAT(big.body["error"].get<std::string>(), HasSubstr("larger than 2048 bytes"));

  // Chunked: no Content-Length up front, so the limit is enforced while reading.
  auto c = s.client();
  const std::string payload = json{{"programs", {std::string(8192, 'y')}}}.dump();
  const httplib::Result chunked = c->Post(
      "/v1/evaluate",
      [&](size_t offset, httplib::DataSink& sink) {
        if (offset >= payload.size()) {
          sink.done();
          return true;
        }
        const size_t n = std::min<size_t>(1024, payload.size() - offset);
        return sink.write(payload.data() + offset, n);
      },
      "application/json");
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 413);

  const std::string small = json{
      {"matrix", {{"rows", {0}}, {"cols", {0}}, {"shape", {1, 1}}}},
      {"programs", {prose}}}.dump();
  EXPECT_EQ(post(s, small).status, 200);  // the limit is on size, not on the server's state
}

TEST_F(reward_server_test, metrics_count_what_happened) {
  live_server s(eval_, options());
  ASSERT_EQ(post(s, request_body({prose, prose})).status, 200);
  ASSERT_EQ(post(s, request_body({prose})).status, 200);  // same matrix: a cache hit
  ASSERT_EQ(post(s, std::string("nope")).status, 400);
  const std::string text = get_text(s, "/metrics");
  EXPECT_THAT(text,
              HasSubstr("sparserl_http_requests_total{path=\"/v1/evaluate\",status=\"200\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("sparserl_http_requests_total{path=\"/v1/evaluate\",status=\"400\"} 1"));
  EXPECT_THAT(text, HasSubstr("sparserl_programs_evaluated_total 3\n"));
  EXPECT_THAT(text, HasSubstr("sparserl_verdicts_total{outcome=\"no_program\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("sparserl_matrix_cache_hits_total 1\n"));
  EXPECT_THAT(text, HasSubstr("sparserl_matrix_cache_misses_total 1\n"));
  EXPECT_THAT(text,
              HasSubstr("sparserl_http_request_duration_seconds_count{path=\"/v1/evaluate\"} 3"));
  EXPECT_THAT(text, HasSubstr("sparserl_queue_depth 0\n"));
  EXPECT_THAT(text, HasSubstr("sparserl_workers 2\n"));
}

TEST_F(reward_server_test, registered_matrices_by_name) {
  std::string pattern = (fs::temp_directory_path() / "sparserl-serve-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  write_matrix_market((dir / "random300.mtx").string(), test_matrix());
  std::ofstream(dir / "broken.mtx") << "%%MatrixMarket matrix coordinate real general\n2 2\n";
  serve_options o = options();
  o.matrices_dir = dir.string();
  {
    live_server s(eval_, o);
    const reply r =
        post(s, json{{"matrix", {{"name", "random300"}}}, {"programs", {good_program}}});
    ASSERT_EQ(r.status, 200) << r.body.dump();
    EXPECT_EQ(r.body["matrix"]["name"], "random300");
    EXPECT_EQ(r.body["matrix"]["nnz"], test_matrix().nnz());
    EXPECT_TRUE(r.body["results"][0]["correct"].get<bool>()) << r.body["results"][0]["failure"];
    const reply broken = post(s, json{{"matrix", {{"name", "broken"}}}, {"programs", {prose}}});
    EXPECT_EQ(broken.status, 500);  // the server's file, not the client's mistake
    EXPECT_THAT(broken.body["error"].get<std::string>(), HasSubstr("registered matrix \"broken\""));
  }
  fs::remove_all(dir);
}

TEST_F(reward_server_test, a_full_queue_is_429_with_retry_after) {
  gated_runner gate(cpu_);
  evaluator eval(gate);
  serve_options o = options(1);
  o.queue_capacity = 2;
  o.request.max_programs = 2;
  live_server s(eval, o);
  auto running =
      std::async(std::launch::async, [&] { return post(s, request_body({good_program})); });
  ASSERT_TRUE(gate.wait_entered(1));  // the one worker holds it: the queue is empty
  auto queued = std::async(std::launch::async, [&] {
    return post(s, request_body({good_program, good_program}));
  });
  ASSERT_TRUE(wait_for_queue_depth(s, 2));
  const reply full = post(s, request_body({good_program}));
  EXPECT_EQ(full.status, 429);
  EXPECT_THAT(full.body["error"].get<std::string>(), HasSubstr("queue full"));
  EXPECT_GE(std::stoi(full.retry_after), 1);
  gate.open();
  EXPECT_EQ(running.get().status, 200);
  const reply later = queued.get();
  ASSERT_EQ(later.status, 200);
  EXPECT_EQ(later.body["results"].size(), 2u);
  EXPECT_THAT(get_text(s, "/metrics"),
              HasSubstr("sparserl_http_requests_total{path=\"/v1/evaluate\",status=\"429\"} 1"));
}

TEST_F(reward_server_test, stop_answers_every_queued_request_then_refuses_connections) {
  gated_runner gate(cpu_);
  evaluator eval(gate);
  live_server s(eval, options(1));
  std::vector<std::future<reply>> replies;
  replies.push_back(
      std::async(std::launch::async, [&] { return post(s, request_body({good_program}, "a")); }));
  ASSERT_TRUE(gate.wait_entered(1));
  for (const char* id : {"b", "c"})
    replies.push_back(std::async(std::launch::async, [&s, id] {
      return post(s, request_body({good_program, wrong_program}, id));
    }));
  ASSERT_TRUE(wait_for_queue_depth(s, 4));
  s.stop();  // as on SIGTERM: the listening socket closes, admitted work goes on
  EXPECT_EQ(post(s, request_body({prose})).status, -1);  // nothing listens any more
  gate.open();
  const char* ids[] = {"a", "b", "c"};
  for (size_t i = 0; i < replies.size(); ++i) {
    const reply r = replies[i].get();
    ASSERT_EQ(r.status, 200) << r.body.dump();
    EXPECT_EQ(r.body["id"], ids[i]);
    EXPECT_TRUE(r.body["results"][0]["correct"].get<bool>());
    if (i > 0) {
      EXPECT_EQ(r.body["results"][1]["outcome"], "wrong_result");
    }
  }
  s.stop_and_join();  // run() returns: the queue is drained
}

}  // namespace
}  // namespace sparserl
