// The GPU executor. On every machine: the worker binary is found, a worker that cannot reach a
// GPU fails cleanly, and the pool's process management (watchdog, crash and sticky-error
// replacement, upload caching, bounded logs, concurrency) is driven through stand-in workers:
// this test binary itself speaking the worker protocol with a CPU SpMV, and plain shell commands.
// On a machine with a GPU: real NVRTC programs, hostile ones, cuSPARSE and the copy bandwidth.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "eval/compiler.h"
#include "eval/gpu_protocol.h"
#include "eval/gpu_runner.h"
#include "eval/verify.h"
#include "kernel/abi.h"
#include "random_data.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

// ---- a stand-in worker: this executable, when SPARSERL_FAKE_GPU_WORKER names a behaviour ------

const kernel_arg* find_arg(const std::vector<kernel_arg>& args, const std::string& name) {
  for (const kernel_arg& a : args)
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<float> cpu_spmv(const std::vector<kernel_arg>& args, const std::vector<float>& x) {
  const auto& row_ptr = find_arg(args, "row_ptr")->ints;
  const auto& col_idx = find_arg(args, "col_idx")->ints;
  const auto& values = find_arg(args, "values")->floats;
  std::vector<float> y(row_ptr.size() - 1);
  for (size_t r = 0; r + 1 < row_ptr.size(); ++r) {
    double s = 0;
    for (int32_t i = row_ptr[r]; i < row_ptr[r + 1]; ++i) s += double{values[i]} * x[col_idx[i]];
    y[r] = static_cast<float>(s);
  }
  return y;
}

// Modes: cpu (a correct CPU worker), nogpu, and hang / crash / linger / fatal / spam, each with a
// _once variant that misbehaves only in the first process (SPARSERL_FAKE_MARKER records it).
int fake_worker(const std::string& mode) {
  const int out = ::dup(1);
  ::dup2(2, 1);
  const char* marker = std::getenv("SPARSERL_FAKE_MARKER");
  const bool first = marker && ::access(marker, F_OK) != 0;
  if (first) ::close(::open(marker, O_CREAT | O_WRONLY, 0600));
  const bool once = mode.size() > 5 && mode.substr(mode.size() - 5) == "_once";
  const std::string base = once ? mode.substr(0, mode.size() - 5) : mode;
  const bool misbehave = !once || first;

  device_info hello;
  hello.ok = base != "nogpu";
  hello.error = hello.ok ? "" : "CUDA_ERROR_NO_DEVICE in cuInit";
  hello.name = "fake";
  wire::write_message(out, gpu_protocol::encode_hello(hello));
  if (!hello.ok) return 1;

  std::map<std::string, std::vector<kernel_arg>> cache;
  std::vector<char> message;
  while (wire::read_message(0, message)) {
    wire::reader r(message);
    const gpu_protocol::message kind = gpu_protocol::read_kind(r);
    if (kind == gpu_protocol::message::load_data) {
      gpu_protocol::load_request q = gpu_protocol::decode_load(r);
      for (const std::string& key : q.evict) cache.erase(key);
      std::fprintf(stderr, "fake: load %s\n", q.key.c_str());
      cache[q.key] = std::move(q.args);
      wire::write_message(out, gpu_protocol::encode_status_reply(kind, {}));
      continue;
    }
    if (kind == gpu_protocol::message::baseline) {
      const gpu_protocol::baseline_request q = gpu_protocol::decode_baseline(r);
      // ALG1 right; ALG2 faster but wrong (the runner must drop it); ALG3 refused.
      cusparse_algorithm a;
      a.name = "fake CSR_ALG1";
      a.ok = true;
      a.output.resize(q.matrix.rows);
      spmv_reference(q.matrix, q.input.data(), a.output.data());
      a.timing = summarize_times({0.5, 0.25, 1.0}, q.timing, false);
      cusparse_algorithm wrong = a;
      wrong.name = "fake CSR_ALG2";
      for (float& v : wrong.output) v = -v - 1;
      wrong.timing = summarize_times({0.1}, q.timing, false);
      const cusparse_algorithm refused{
          "fake CSR_ALG3", false, "CUSPARSE_STATUS_NOT_SUPPORTED", {}, {}};
      wire::write_message(out, gpu_protocol::encode_baseline_reply({}, {a, wrong, refused}));
      continue;
    }
    if (kind == gpu_protocol::message::copy_bandwidth) {
      const auto q = gpu_protocol::decode_copy_bandwidth(r);
      wire::write_message(out, gpu_protocol::encode_bandwidth_reply(
                                   {}, q.bytes, summarize_times({2.0}, q.timing, false)));
      continue;
    }
    const gpu_protocol::run_program_request q = gpu_protocol::decode_run(r);
    if (misbehave && base == "hang")
      for (;;) ::pause();
    if (misbehave && base == "linger") {  // closes its connection, then is slow to exit
      ::close(0);
      ::close(out);
      ::sleep(30);
      return 0;
    }
    if (misbehave && base == "crash") {
      std::signal(SIGSEGV, SIG_DFL);  // a real crash, even where a sanitizer handles SIGSEGV
      std::raise(SIGSEGV);
    }
    gpu_protocol::run_program_reply reply;
    if (misbehave && base == "fatal") {
      reply.result = {false, "CUDA_ERROR_ILLEGAL_ADDRESS in trial 1: synchronize", true};
      wire::write_message(out, gpu_protocol::encode_run_reply(reply));
      return 3;
    }
    if (misbehave && base == "spam") {
      const std::string line(1023, 'x');
      for (int i = 0; i < 1024; ++i) std::fprintf(stderr, "%s\n", line.c_str());
      std::fflush(stderr);
    }
    auto it = cache.find(q.key);
    if (it == cache.end()) {
      reply.result = {false, "data not loaded: " + q.key, false};
    } else {
      for (const auto& x : q.inputs) reply.trials.push_back({cpu_spmv(it->second, x), true, true});
      if (q.measure_time) {
        reply.timed = true;
        reply.timing = summarize_times({0.125, 0.25, 0.5}, q.timing, false);
        // Like the worker: checked timed runs, each on its own input from the request's seed.
        std::mt19937_64 rng(q.timed_input_seed);
        std::uniform_real_distribution<float> dist(-1, 1);
        for (int32_t run = 1; run <= std::max(2, q.checked_timed_runs); ++run) {
          std::vector<float> x(q.inputs[0].size());
          for (float& v : x) v = dist(rng);
          reply.checked_runs.push_back({run, x, cpu_spmv(it->second, x), true});
        }
      }
    }
    wire::write_message(out, gpu_protocol::encode_run_reply(reply));
  }
  return 0;
}

// Runs before main(): a stand-in worker never reaches GoogleTest.
const int fake_worker_status = [] {
  if (const char* mode = std::getenv("SPARSERL_FAKE_GPU_WORKER")) std::_Exit(fake_worker(mode));
  return 0;
}();

// ---- helpers -----------------------------------------------------------------------------------

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

std::string temp_marker() {
  char dir[] = "/tmp/sparserl-gpu-test-XXXXXX";
  EXPECT_NE(::mkdtemp(dir), nullptr);
  return std::string(dir) + "/marker";
}

gpu_runner_options fake_options(const std::string& mode, int workers = 1) {
  gpu_runner_options o;
  o.worker_command = {self_exe()};
  o.worker_env = {"SPARSERL_FAKE_GPU_WORKER=" + mode, "SPARSERL_FAKE_MARKER=" + temp_marker()};
  o.workers_per_device = workers;
  o.start_timeout_s = 20;
  o.timeout_margin_s = 0.5;
  return o;
}

csr_matrix random_matrix(int32_t rows, int32_t cols, int per_row, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> col(0, cols - 1);
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  std::vector<triplet> t;
  for (int32_t r = 0; r < rows; ++r)
    for (int i = 0; i < per_row + static_cast<int>(r % 7); ++i)
      t.push_back({r, col(rng), val(rng)});
  return csr_from_triplets(rows, cols, std::move(t));
}

using testing::random_vector;

kernel_program csr_program(const std::string& source, int block = 128) {
  kernel_program p;
  p.format = format_kind::csr;
  launch_spec l;
  l.block = block;
  l.rows_per_block = block;
  p.launches = {l};
  p.source = source;
  return p;
}

// A task: matrix, its CSR arguments and a request for `trials` fresh inputs. Holds everything the
// request points at.
struct task {
  csr_matrix a;
  kernel_program program;
  format_arguments args;
  std::vector<char> cubin{'f', 'a', 'k', 'e'};
  run_request request;

  task(const task&) = delete;  // the request points into this object
  task& operator=(const task&) = delete;
  task(int32_t rows, int32_t cols, const std::string& id, int trials = 2, uint64_t seed = 1)
      : a(random_matrix(rows, cols, 3, seed)), program(csr_program("")) {
    args = build_arguments(sparse_op::spmv, a, program, 1);
    request.op = sparse_op::spmv;
    request.rows = rows;
    request.cols = cols;
    request.program = &program;
    request.args = &args;
    request.data_id = id;
    request.cubin = &cubin;
    request.entries = {"spmv_csr"};
    request.geometry = {compute_geometry(
        program.launches[0], entry_points(sparse_op::spmv, format_kind::csr)[0], args, 1)};
    for (int t = 0; t < trials; ++t) request.inputs.push_back(random_vector(cols, seed * 100 + t));
    const uint32_t poison = output_poison;
    std::memcpy(&request.poison, &poison, sizeof(poison));
  }
  static constexpr uint32_t output_poison = 0x7fc0dead;

  // Every trial's output within the verification bound of the double reference.
  ::testing::AssertionResult matches(const run_result& r) const {
    if (!r.ok) return ::testing::AssertionFailure() << "run failed: " << r.failure;
    if (r.trials.size() != request.inputs.size())
      return ::testing::AssertionFailure() << r.trials.size() << " trials";
    for (size_t t = 0; t < r.trials.size(); ++t) {
      const check_result c = check_output(
          compute_reference(sparse_op::spmv, a, request.inputs[t], 1), r.trials[t].output);
      if (!c.ok)
        return ::testing::AssertionFailure()
               << "trial " << t << ": " << c.describe(sparse_op::spmv, 1);
    }
    return ::testing::AssertionSuccess();
  }
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// ---- the real worker binary --------------------------------------------------------------------

TEST(GpuRunner, FindsTheWorkerBinary) {
  const std::string path = gpu_runner::find_worker();
  EXPECT_EQ(::access(path.c_str(), X_OK), 0) << path;
  EXPECT_EQ(path.substr(path.find_last_of('/') + 1), "sparserl-gpu-worker");
}

TEST(GpuRunner, MissingWorkerIsAClearError) {
  gpu_runner_options o;
  o.worker_path = "/nonexistent/sparserl-gpu-worker";
  try {
    gpu_runner runner(o);
    FAIL() << "a missing worker was accepted";
  } catch (const error& e) {
    EXPECT_TRUE(contains(e.what(), "/nonexistent/sparserl-gpu-worker")) << e.what();
  }
  ::setenv("SPARSERL_GPU_WORKER", "/nonexistent/worker", 1);
  EXPECT_THROW(gpu_runner::find_worker(), error);
  ::unsetenv("SPARSERL_GPU_WORKER");
  EXPECT_NO_THROW(gpu_runner::find_worker());
}

bool gpu_present() {
  static const bool present = [] {
    gpu_runner runner;
    const device_info d = runner.device();
    if (d.ok)
      std::printf("GPU: %s, cc %d.%d, %d SMs, L2 %lld B, opt-in shared %lld B, driver %d\n",
                  d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count,
                  static_cast<long long>(d.l2_bytes), static_cast<long long>(d.max_shared_optin),
                  d.driver_version);
    return d.ok;
  }();
  return present;
}

TEST(GpuRunner, WorkerWithoutAGpuFailsCleanly) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present";
  gpu_runner runner;
  const device_info d = runner.device();
  EXPECT_FALSE(d.ok);
  EXPECT_FALSE(d.error.empty());
  task t(50, 40, "no-gpu");
  for (int i = 0; i < 2; ++i) {  // the failed worker is replaced each time, never hangs
    const run_result r = runner.run(t.request, run_limits{});
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.failure, "gpu worker")) << r.failure;
  }
  const std::optional<baseline_result> b = runner.baseline({sparse_op::spmv, &t.a, 1, "no-gpu"});
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(b->ok);
}

// ---- process management through stand-in workers ----------------------------------------------

TEST(GpuRunnerPool, StandInWorkerRunsAndUploadsOnce) {
  gpu_runner runner(fake_options("cpu"));
  EXPECT_EQ(runner.device().name, "fake");
  task t(300, 200, "matrix-a", 3);
  t.request.measure_time = true;
  const run_result first = runner.run(t.request, run_limits{});
  EXPECT_TRUE(t.matches(first));
  ASSERT_TRUE(first.kernel_ms.has_value());
  EXPECT_DOUBLE_EQ(*first.kernel_ms, 0.25);
  EXPECT_TRUE(contains(first.timing_method, "CUDA events"));
  EXPECT_EQ(count(first.log, "fake: load"), 1u);
  const run_result second = runner.run(t.request, run_limits{});
  EXPECT_TRUE(t.matches(second));
  EXPECT_EQ(count(second.log, "fake: load"), 0u) << "same data_id uploaded twice";
  EXPECT_EQ(runner.workers_started(), 1);
}

TEST(GpuRunnerPool, UploadCacheEvictsInLruOrder) {
  gpu_runner_options o = fake_options("cpu");
  task a(200, 100, "a", 1, 1), b(200, 100, "b", 1, 2);
  o.cache_bytes = a.args.footprint_bytes + b.args.footprint_bytes / 2;  // room for one
  gpu_runner runner(o);
  std::string log;
  for (task* t : {&a, &b, &a, &a}) {
    const run_result r = runner.run(t->request, run_limits{});
    EXPECT_TRUE(t->matches(r));  // the stand-in fails runs whose data it evicted
    log += r.log;
  }
  EXPECT_EQ(count(log, "fake: load a"), 2u) << log;
  EXPECT_EQ(count(log, "fake: load b"), 1u) << log;
}

TEST(GpuRunnerPool, ContentKeyWithoutDataId) {
  gpu_runner runner(fake_options("cpu"));
  task a(100, 100, "", 1, 1), b(100, 100, "", 1, 2);  // same shapes, different values
  EXPECT_TRUE(a.matches(runner.run(a.request, run_limits{})));
  EXPECT_TRUE(b.matches(runner.run(b.request, run_limits{})));
  EXPECT_EQ(count(runner.run(a.request, run_limits{}).log, "fake: load"), 0u);
}

TEST(GpuRunnerPool, TimeoutKillsAndReplacesTheWorker) {
  gpu_runner runner(fake_options("hang_once"));
  task t(100, 100, "t");
  run_limits limits;
  limits.launch_timeout_s = 0.25;
  const run_result hung = runner.run(t.request, limits);
  EXPECT_FALSE(hung.ok);
  EXPECT_TRUE(contains(hung.failure, "timeout after 1 s")) << hung.failure;  // 2 x 0.25 + 0.5
  const run_result next = runner.run(t.request, limits);
  EXPECT_TRUE(t.matches(next));
  EXPECT_EQ(runner.workers_started(), 2);
}

// A worker lost without a reply gets the program once more on its replacement: a one-off crash
// costs a retry (said in the log), a repeated one is the verdict, with the signal.
TEST(GpuRunnerPool, LostWorkerIsRetriedOnceThenItsCrashIsReported) {
  {
    gpu_runner runner(fake_options("crash_once"));
    task t(100, 100, "t");
    const run_result r = runner.run(t.request, run_limits{});
    EXPECT_TRUE(t.matches(r)) << r.failure;
    EXPECT_TRUE(contains(r.log, "retried after: worker crashed: signal 11")) << r.log;
    EXPECT_EQ(runner.workers_started(), 2);
  }
  gpu_runner runner(fake_options("crash"));
  task t(100, 100, "t");
  const run_result crashed = runner.run(t.request, run_limits{});
  EXPECT_FALSE(crashed.ok);
  EXPECT_TRUE(contains(crashed.failure, "worker crashed: signal 11")) << crashed.failure;
  EXPECT_EQ(runner.workers_started(), 3);  // two attempts, and the second one's replacement
}

// A worker that closed its end but does not exit in exit_wait_s is killed, and the failure says
// that rather than reporting the pool's own SIGKILL as a crash.
TEST(GpuRunnerPool, WorkerSlowToExitIsKilledAndSaidSo) {
  gpu_runner_options o = fake_options("linger");
  o.exit_wait_s = 0.2;
  gpu_runner runner(o);
  task t(100, 100, "t");
  const run_result r = runner.run(t.request, run_limits{});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.failure, "closed its connection without a reply and had not exited"))
      << r.failure;
  EXPECT_FALSE(contains(r.failure, "signal 9")) << r.failure;
}

TEST(GpuRunnerPool, StickyErrorReplacesTheWorker) {
  gpu_runner runner(fake_options("fatal_once"));
  task t(100, 100, "t");
  const run_result fault = runner.run(t.request, run_limits{});
  EXPECT_FALSE(fault.ok);
  EXPECT_EQ(fault.failure, "CUDA_ERROR_ILLEGAL_ADDRESS in trial 1: synchronize");
  const run_result next = runner.run(t.request, run_limits{});
  EXPECT_TRUE(t.matches(next));
  EXPECT_EQ(count(next.log, "fake: load"), 1u) << "the replacement must be sent the data again";
  EXPECT_EQ(runner.workers_started(), 2);
}

TEST(GpuRunnerPool, NoDeviceHelloIsTheFailure) {
  gpu_runner runner(fake_options("nogpu"));
  task t(10, 10, "t");
  const run_result r = runner.run(t.request, run_limits{});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.failure, "cannot use device 0: CUDA_ERROR_NO_DEVICE")) << r.failure;
  EXPECT_FALSE(runner.device().ok);
}

TEST(GpuRunnerPool, WorkerLogIsBounded) {
  gpu_runner runner(fake_options("spam"));  // 1 MiB of stderr during every run
  task t(100, 100, "t");
  run_limits limits;
  limits.max_log_bytes = 4096;
  const run_result r = runner.run(t.request, limits);
  EXPECT_TRUE(t.matches(r));
  EXPECT_LE(r.log.size(), 4096u);
  EXPECT_TRUE(contains(r.log, "xxxx"));
}

TEST(GpuRunnerPool, ShellWorkersThatExitHangOrLie) {
  task t(10, 10, "t");
  {
    gpu_runner_options o;
    o.worker_command = {"/bin/sh", "-c", "echo no cuda here >&2; exit 3"};
    gpu_runner runner(o);
    const run_result r = runner.run(t.request, run_limits{});
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.failure, "exit status 3")) << r.failure;
    EXPECT_TRUE(contains(r.failure, "no cuda here")) << r.failure;
  }
  {
    gpu_runner_options o;
    o.worker_command = {"/bin/sh", "-c", "sleep 100"};
    o.start_timeout_s = 0.3;
    gpu_runner runner(o);
    const run_result r = runner.run(t.request, run_limits{});
    EXPECT_TRUE(contains(r.failure, "did not start within 0.3 s")) << r.failure;
  }
  {
    gpu_runner_options o;  // a frame header of "garbage\n" claims ~7 EB
    o.worker_command = {"/bin/sh", "-c", "echo garbage; sleep 100"};
    o.start_timeout_s = 5;
    gpu_runner runner(o);
    const run_result r = runner.run(t.request, run_limits{});
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.failure, "malformed hello frame")) << r.failure;
  }
  {
    gpu_runner_options o;
    o.worker_command = {"/nonexistent/worker"};
    gpu_runner runner(o);
    const run_result r = runner.run(t.request, run_limits{});
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.failure.empty());
  }
}

TEST(GpuRunnerPool, ConcurrentCallersShareThePool) {
  gpu_runner runner(fake_options("cpu", 2));
  EXPECT_EQ(runner.pool_size(), 2);
  std::vector<std::unique_ptr<task>> tasks;
  for (int i = 0; i < 4; ++i)
    tasks.push_back(std::make_unique<task>(150, 120, "task" + std::to_string(i % 2), 1, i % 2 + 1));
  std::vector<int> good(tasks.size(), 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < tasks.size(); ++i)
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < 3; ++rep)
        good[i] += tasks[i]->matches(runner.run(tasks[i]->request, run_limits{}));
    });
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < tasks.size(); ++i) EXPECT_EQ(good[i], 3) << "task " << i;
  EXPECT_EQ(runner.workers_started(), 2);
}

// The worker receives every argument kind as the harness built it: CSR16's 16-bit column offsets
// arrive byte for byte (the worker uploads arrays by kind, generically).
// A load message for `args` (evicting `evict`), decoded: every argument comes back as it went.
gpu_protocol::load_request load_round_trip(const std::vector<kernel_arg>& args,
                                           const std::vector<std::string>& evict) {
  const std::vector<char> message = gpu_protocol::encode_load("k", evict, args);
  wire::reader r(message);
  EXPECT_EQ(gpu_protocol::read_kind(r), gpu_protocol::message::load_data);
  gpu_protocol::load_request q = gpu_protocol::decode_load(r);
  EXPECT_EQ(q.args.size(), args.size());
  for (size_t i = 0; i < std::min(q.args.size(), args.size()); ++i) {
    EXPECT_EQ(q.args[i].kind, args[i].kind) << args[i].name;
    EXPECT_EQ(q.args[i].name, args[i].name);
    EXPECT_EQ(q.args[i].scalar, args[i].scalar);
    EXPECT_EQ(q.args[i].ints, args[i].ints);
    EXPECT_EQ(q.args[i].floats, args[i].floats);
    EXPECT_EQ(q.args[i].shorts, args[i].shorts);
  }
  return q;
}

TEST(GpuRunnerPool, LoadCarriesSixteenBitArrays) {
  const csr_matrix a = csr_from_triplets(3, 70000, {{0, 10, 1.0f}, {0, 65545, 2.0f}, {2, 7, 3.0f}});
  kernel_program p;
  p.format = format_kind::csr16;
  const format_arguments args = build_arguments(sparse_op::spmv, a, p, 1);
  const gpu_protocol::load_request q = load_round_trip(args.args, {"old"});
  ASSERT_EQ(q.args.size(), args.args.size());
  const kernel_arg& offsets = q.args[5];
  EXPECT_EQ(offsets.kind, arg_kind::u16_array);
  EXPECT_EQ(offsets.shorts, (std::vector<uint16_t>{0, 65535, 0}));
  EXPECT_EQ(offsets.array_bytes(), 6u);
  EXPECT_TRUE(offsets.is_array());
}

// RCSR's scratch slot travels as its kind and name only: the worker allocates the buffer
// (input-sized) and poisons it before every run; nothing is uploaded and nothing is compared.
TEST(GpuRunnerPool, LoadCarriesTheScratchPlaceholder) {
  const csr_matrix a = csr_from_triplets(4, 4, {{0, 3, 1.0f}, {1, 1, 2.0f}, {3, 0, 3.0f}});
  kernel_program p;
  p.format = format_kind::rcsr;
  const format_arguments args = build_arguments(sparse_op::spmv, a, p, 1);
  const gpu_protocol::load_request q = load_round_trip(args.args, {});
  ASSERT_EQ(q.args.size(), args.args.size());
  const kernel_arg& work = q.args[7];  // rows, cols, nnz, perm, row_ptr, col_idx, values, work
  EXPECT_EQ(work.kind, arg_kind::scratch);
  EXPECT_EQ(work.name, "work");
  EXPECT_FALSE(work.is_array());
  EXPECT_EQ(work.array_bytes(), 0u);
  // A kind past the last one is refused, not cast.
  kernel_arg bad = args.args[7];
  bad.kind = static_cast<arg_kind>(static_cast<int>(arg_kind::scratch) + 1);
  const std::vector<char> wrong = gpu_protocol::encode_load("k", {}, {bad});
  wire::reader rw(wrong);
  ASSERT_EQ(gpu_protocol::read_kind(rw), gpu_protocol::message::load_data);
  EXPECT_THROW(gpu_protocol::decode_load(rw), error);
}

TEST(GpuRunnerPool, MalformedRequestsFailBeforeAnyWorker) {
  gpu_runner runner(fake_options("cpu"));
  task t(10, 10, "t");
  run_request bad = t.request;
  bad.inputs[0].pop_back();
  EXPECT_TRUE(contains(runner.run(bad, run_limits{}).failure, "input 0 has 9 values"));
  bad = t.request;
  bad.cubin = nullptr;
  EXPECT_TRUE(contains(runner.run(bad, run_limits{}).failure, "no cubin"));
  run_limits tight;
  tight.memory_bytes = 100;
  EXPECT_TRUE(contains(runner.run(t.request, tight).failure, "exceeds the limit"));
  EXPECT_EQ(runner.workers_started(), 0);
}

TEST(GpuRunnerPool, BaselineAndBandwidthThroughTheProtocol) {
  gpu_runner runner(fake_options("cpu"));
  const csr_matrix a = random_matrix(80, 60, 4, 9);
  const cusparse_timings all = runner.baseline_all({sparse_op::spmv, &a, 1, "a"});
  ASSERT_TRUE(all.ok) << all.failure;
  ASSERT_EQ(all.algorithms.size(), 3u);
  ASSERT_EQ(all.input.size(), 60u);
  std::vector<float> expect(80);
  spmv_reference(a, all.input.data(), expect.data());
  EXPECT_EQ(all.algorithms[0].output, expect);
  // The faster ALG2 is wrong against the CPU reference, so it is marked failed and never wins.
  EXPECT_FALSE(all.algorithms[1].ok);
  EXPECT_TRUE(contains(all.algorithms[1].failure, "wrong result against the CPU reference"))
      << all.algorithms[1].failure;
  const std::optional<baseline_result> best = runner.baseline({sparse_op::spmv, &a, 1, "a"});
  ASSERT_TRUE(best && best->ok);
  EXPECT_EQ(best->name, "fake CSR_ALG1");
  EXPECT_EQ(best->algorithm, "CSR_ALG1");
  EXPECT_DOUBLE_EQ(best->ms, 0.5);
  EXPECT_TRUE(contains(best->skipped, "fake CSR_ALG2: wrong result")) << best->skipped;
  EXPECT_TRUE(contains(best->skipped, "fake CSR_ALG3: CUSPARSE_STATUS_NOT_SUPPORTED"))
      << best->skipped;
  const bandwidth_result bw = runner.copy_bandwidth(int64_t{1} << 20);
  ASSERT_TRUE(bw.ok) << bw.failure;
  EXPECT_DOUBLE_EQ(bw.gbps, 2.0 * (1 << 20) / 2e6);  // read + write over the 2 ms median
}

// ---- on a GPU ----------------------------------------------------------------------------------

#define REQUIRE_GPU() \
  if (!gpu_present()) GTEST_SKIP() << "no GPU or CUDA driver on this machine"

const char* spmv_body = R"(
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum;
})";

std::string csr_kernel(const std::string& body) {
  return entry_signature(sparse_op::spmv, format_kind::csr, "spmv_csr") + " {" + body + "\n";
}

// A real task: the program compiled by NVRTC.
struct gpu_task : task {
  compile_result compiled;
  gpu_task(const std::string& body, int32_t rows, int32_t cols, const std::string& id,
           int trials = 3)
      : task(rows, cols, id, trials) {
    compiled = compile_device_source(csr_kernel(body), compile_options{});
    EXPECT_TRUE(compiled.ok) << compiled.log;
    request.cubin = &compiled.cubin;
  }
};

gpu_runner_options gpu_options() {
  gpu_runner_options o;
  o.timeout_margin_s = 3;
  return o;
}

TEST(GpuRunnerDevice, CsrSpmvMatchesTheReference) {
  REQUIRE_GPU();
  gpu_runner runner(gpu_options());
  gpu_task t(spmv_body, 20000, 15000, "csr");
  t.request.measure_time = true;
  const run_result r = runner.run(t.request, run_limits{});
  EXPECT_TRUE(t.matches(r)) << r.log;
  for (const trial_result& trial : r.trials) {
    EXPECT_TRUE(trial.input_unchanged);
    EXPECT_TRUE(trial.format_unchanged);
  }
  ASSERT_TRUE(r.kernel_ms.has_value());
  EXPECT_GT(*r.kernel_ms, 0);
  EXPECT_TRUE(contains(r.timing_method, "L2 flushed")) << r.timing_method;
  // Timed runs: the last and random others come back, each on a fresh input of its own, and
  // each output right for its input.
  ASSERT_GE(r.checked_runs.size(), 2u);
  EXPECT_GT(r.checked_runs.back().run, r.checked_runs.front().run);
  EXPECT_NE(r.checked_runs.front().input, r.checked_runs.back().input);
  EXPECT_NE(r.checked_runs.back().input, t.request.inputs.back());
  for (const timed_run_check& c : r.checked_runs) {
    EXPECT_TRUE(c.input_unchanged);
    const check_result check =
        check_output(compute_reference(sparse_op::spmv, t.a, c.input, 1), c.output);
    EXPECT_TRUE(check.ok) << "timed run " << c.run << ": " << check.describe(sparse_op::spmv, 1);
  }
  std::printf("CSR SpMV 20000 x 15000: %.4f ms (%s)\n", *r.kernel_ms, r.timing_method.c_str());
}

TEST(GpuRunnerDevice, UnwrittenOutputsKeepThePoison) {
  REQUIRE_GPU();
  gpu_runner runner(gpu_options());
  gpu_task none("}", 1000, 1000, "poison");
  gpu_task half(R"(
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows || row % 2) return;
  float sum = 0;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum;
})",
                1000, 1000, "poison");
  for (gpu_task* t : {&none, &half}) {
    const run_result r = runner.run(t->request, run_limits{});
    ASSERT_TRUE(r.ok) << r.failure;
    EXPECT_FALSE(t->matches(r));
    size_t poisoned = 0;
    for (float v : r.trials[0].output) {
      uint32_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      poisoned += bits == task::output_poison;
    }
    EXPECT_EQ(poisoned, t == &none ? 1000u : 500u);
  }
}

TEST(GpuRunnerDevice, WritesToInputsAndFormatArraysAreCaught) {
  REQUIRE_GPU();
  gpu_runner runner(gpu_options());
  gpu_task writes_x(std::string(R"(
  if (blockIdx.x == 0 && threadIdx.x == 0) const_cast<float*>(x)[0] = 42.0f;)") +
                        spmv_body,
                    500, 500, "hostile");
  const run_result rx = runner.run(writes_x.request, run_limits{});
  ASSERT_TRUE(rx.ok) << rx.failure;
  EXPECT_FALSE(rx.trials[0].input_unchanged);
  EXPECT_TRUE(rx.trials[0].format_unchanged);

  gpu_task writes_values(std::string(R"(
  if (blockIdx.x == 0 && threadIdx.x == 0) const_cast<float*>(values)[0] = 1e9f;)") +
                             spmv_body,
                         500, 500, "hostile");
  const run_result rv = runner.run(writes_values.request, run_limits{});
  ASSERT_TRUE(rv.ok) << rv.failure;
  EXPECT_FALSE(rv.trials[0].format_unchanged);
  // The cached arrays were restored: an honest program on the same data_id is right again.
  gpu_task honest(spmv_body, 500, 500, "hostile");
  EXPECT_TRUE(honest.matches(runner.run(honest.request, run_limits{})));
}

TEST(GpuRunnerDevice, FaultsAndHangsDoNotStopThePool) {
  REQUIRE_GPU();
  gpu_runner runner(gpu_options());
  gpu_task honest(spmv_body, 2000, 2000, "faults");
  gpu_task oob(R"(
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) y[row] = x[row + (1 << 28)];  // 1 GiB past x
})",
               2000, 2000, "faults");
  const run_result r = runner.run(oob.request, run_limits{});
  EXPECT_FALSE(oob.matches(r));
  std::printf("OOB read: %s\n", r.ok ? "no fault (read mapped memory)" : r.failure.c_str());
  EXPECT_TRUE(honest.matches(runner.run(honest.request, run_limits{})));

  gpu_task trap("  __trap();\n}", 2000, 2000, "faults");
  const run_result rt = runner.run(trap.request, run_limits{});
  EXPECT_FALSE(rt.ok);
  EXPECT_TRUE(contains(rt.failure, "CUDA_ERROR_")) << rt.failure;
  EXPECT_TRUE(honest.matches(runner.run(honest.request, run_limits{})));

  gpu_task spin(R"(
  // clock64() is never negative, but the compiler cannot know: a loop it must keep.
  while (clock64() >= 0) {}
  y[0] = 1.0f;
})",
                2000, 2000, "faults", 1);
  run_limits limits;
  limits.launch_timeout_s = 1;
  const auto t0 = std::chrono::steady_clock::now();
  const run_result rs = runner.run(spin.request, limits);
  const double launch_to_verdict_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(rs.ok);
  EXPECT_TRUE(contains(rs.failure, "timeout after 1 s in trial 1")) << rs.failure;
  // The worker polls against the per-launch limit and exits; not the parent's watchdog.
  EXPECT_LE(launch_to_verdict_s, limits.launch_timeout_s + 2);
  std::printf("spinning kernel: launch to verdict %.2f s (limit 1 s)\n", launch_to_verdict_s);
  EXPECT_TRUE(honest.matches(runner.run(honest.request, run_limits{})));
}

TEST(GpuRunnerDevice, LaunchesBeyondTheDeviceAreRefused) {
  REQUIRE_GPU();
  gpu_runner runner(gpu_options());
  gpu_task t(spmv_body, 1000, 1000, "launch");
  run_request big_block = t.request;
  big_block.geometry[0].block_x = 2048;
  EXPECT_TRUE(contains(runner.run(big_block, run_limits{}).failure, "refused: block of 2048"));
  run_request big_grid = t.request;
  big_grid.geometry[0].grid_y = 1 << 20;
  EXPECT_TRUE(contains(runner.run(big_grid, run_limits{}).failure, "refused: grid"));
  run_request big_shared = t.request;
  big_shared.geometry[0].shared_bytes = 1 << 20;
  EXPECT_TRUE(contains(runner.run(big_shared, run_limits{}).failure, "opt-in maximum"));
  // Within the opt-in maximum but above 48 KB: accepted after raising the function's limit.
  gpu_task shared_user(R"(
  extern __shared__ float scratch[];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  scratch[threadIdx.x * 200] = 1.0f;
  __syncthreads();
  if (row >= rows) return;
  float sum = 0;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];
  y[row] = sum * scratch[threadIdx.x * 200];
})",
                       1000, 1000, "launch");
  shared_user.request.geometry[0].shared_bytes = 128 * 200 * 4;  // 100 KiB
  EXPECT_TRUE(shared_user.matches(runner.run(shared_user.request, run_limits{})));
}

TEST(GpuRunnerDevice, CsrSpmmUsesRowMajorDenseOperands) {
  REQUIRE_GPU();
  gpu_runner runner(gpu_options());
  const int32_t k = 5;
  const csr_matrix a = random_matrix(3000, 2000, 4, 3);
  kernel_program program = csr_program(R"(
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  for (int j = 0; j < k; ++j) {
    float sum = 0;
    for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * B[col_idx[i] * k + j];
    C[row * k + j] = sum;
  }
})");
  const format_arguments args = build_arguments(sparse_op::spmm, a, program, k);
  const compile_result compiled = compile_device_source(
      entry_signature(sparse_op::spmm, format_kind::csr, "spmm_csr") + " {" + program.source,
      compile_options{});
  ASSERT_TRUE(compiled.ok) << compiled.log;
  run_request request;
  request.op = sparse_op::spmm;
  request.rows = a.rows;
  request.cols = a.cols;
  request.k = k;
  request.program = &program;
  request.args = &args;
  request.data_id = "spmm";
  request.cubin = &compiled.cubin;
  request.entries = {"spmm_csr"};
  request.geometry = {compute_geometry(
      program.launches[0], entry_points(sparse_op::spmm, format_kind::csr)[0], args, k)};
  request.inputs = {random_vector(size_t{2000} * k, 11), random_vector(size_t{2000} * k, 12)};
  request.measure_time = true;
  const run_result r = runner.run(request, run_limits{});
  ASSERT_TRUE(r.ok) << r.failure << r.log;
  for (size_t t = 0; t < r.trials.size(); ++t) {
    const check_result c = check_output(compute_reference(sparse_op::spmm, a, request.inputs[t], k),
                                        r.trials[t].output);
    EXPECT_TRUE(c.ok) << c.describe(sparse_op::spmm, k);
  }
  EXPECT_TRUE(r.kernel_ms.has_value());
}

TEST(GpuRunnerDevice, CusparseBaselinesReturnTimesAndCorrectOutputs) {
  REQUIRE_GPU();
  gpu_runner runner(gpu_options());
  const csr_matrix a = random_matrix(30000, 20000, 8, 5);
  for (const int32_t k : {1, 8, 64}) {
    const sparse_op op = k == 1 ? sparse_op::spmv : sparse_op::spmm;
    const cusparse_timings all = runner.baseline_all({op, &a, k, "a"});
    // SpMV tries CSR_ALG1 and CSR_ALG2; SpMM CSR_ALG1, CSR_ALG2 and CSR_ALG3.
    EXPECT_EQ(all.algorithms.size(), op == sparse_op::spmv ? 2u : 3u);
    ASSERT_TRUE(all.ok) << all.failure << all.log;
    const reference_output ref = compute_reference(op, a, all.input, k);
    int ran = 0;
    for (const cusparse_algorithm& alg : all.algorithms) {
      std::printf("%s: %s\n", alg.name.c_str(),
                  alg.ok
                      ? (std::to_string(alg.timing.median_ms) + " ms, " + alg.timing.method).c_str()
                      : alg.failure.c_str());
      if (!alg.ok) continue;
      ++ran;
      EXPECT_GT(alg.timing.median_ms, 0);
      EXPECT_TRUE(check_output(ref, alg.output).ok) << alg.name;
    }
    EXPECT_GE(ran, 1);
    const std::optional<baseline_result> best = runner.baseline({op, &a, k, "a"});
    ASSERT_TRUE(best && best->ok) << (best ? best->failure : "");
    EXPECT_GT(best->ms, 0);
    EXPECT_EQ(best->algorithm.rfind("CSR_ALG", 0), 0u) << best->algorithm;
    std::printf("k=%d: baseline %s %.4f ms; skipped: %s\n", k, best->name.c_str(), best->ms,
                best->skipped.empty() ? "none" : best->skipped.c_str());
  }
}

TEST(GpuRunnerDevice, CopyBandwidth) {
  REQUIRE_GPU();
  gpu_runner runner(gpu_options());
  const bandwidth_result bw = runner.copy_bandwidth(int64_t{1} << 30);
  ASSERT_TRUE(bw.ok) << bw.failure;
  EXPECT_GT(bw.gbps, 0);
  std::printf("copy bandwidth: %.0f GB/s (read + write; %s)\n", bw.gbps, bw.timing.method.c_str());
}

}  // namespace
}  // namespace sparserl
