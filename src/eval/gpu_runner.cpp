#include "eval/gpu_runner.h"

#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>

#include "eval/verify.h"
#include "sparse/error.h"

namespace sparserl {

namespace {

constexpr const char* worker_binary = "sparserl-gpu-worker";

std::string seconds_text(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

bool executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}

std::string self_directory() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.find_last_of('/'));
}

// The last non-empty line of a log: the worker's reason when it could not even start.
std::string last_line(const std::string& log) {
  size_t end = log.find_last_not_of("\n ");
  if (end == std::string::npos) return "";
  const size_t begin = log.find_last_of('\n', end);
  return log.substr(begin == std::string::npos ? 0 : begin + 1,
                    end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

void append_bounded(std::string& log, const std::string& more, int64_t max_bytes) {
  const int64_t room = max_bytes - static_cast<int64_t>(log.size());
  if (room <= 0 || more.empty()) return;
  log.append(more, 0, static_cast<size_t>(std::min<int64_t>(room, more.size())));
}

int64_t argument_bytes(const format_arguments& args) {
  int64_t bytes = 0;
  for (const kernel_arg& a : args.args) bytes += static_cast<int64_t>(a.array_bytes());
  return bytes;
}

// FNV-1a over every argument: the upload cache key when the caller names no data_id.
std::string content_key(const format_arguments& args) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  for (const kernel_arg& a : args.args) {
    mix(&a.kind, sizeof(a.kind));
    mix(a.name.data(), a.name.size());
    mix(&a.scalar, sizeof(a.scalar));
    mix(a.ints.data(), a.ints.size() * sizeof(int32_t));
    mix(a.floats.data(), a.floats.size() * sizeof(float));
    mix(a.shorts.data(), a.shorts.size() * sizeof(uint16_t));
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return std::string("content:") + hex;
}

// The id plus the arrays' shapes, so two different argument sets under one id never share uploads.
std::string upload_key(const run_request& r) {
  std::string key = r.data_id.empty() ? content_key(*r.args) : r.data_id;
  key += "#";
  for (const kernel_arg& a : r.args->args)
    key += std::to_string(static_cast<int>(a.kind)) + ":" + std::to_string(a.scalar) + ":" +
           std::to_string(a.ints.size()) + ":" + std::to_string(a.floats.size()) + ":" +
           std::to_string(a.shorts.size()) + ",";
  return key;
}

std::string check_request(const run_request& r) {
  const int64_t k = r.op == sparse_op::spmm ? r.k : 1;
  if (!r.args) return "gpu runner: request has no format arguments";
  if (!r.cubin || r.cubin->empty()) return "gpu runner: request has no cubin";
  if (r.entries.empty() || r.entries.size() != r.geometry.size())
    return "gpu runner: " + std::to_string(r.entries.size()) + " entry points but " +
           std::to_string(r.geometry.size()) + " launch geometries";
  if (r.rows < 0 || r.cols < 0 || k < 1) return "gpu runner: bad problem shape";
  if (r.inputs.empty()) return "gpu runner: request has no trials";
  for (size_t i = 0; i < r.inputs.size(); ++i)
    if (static_cast<int64_t>(r.inputs[i].size()) != int64_t{r.cols} * k)
      return "gpu runner: input " + std::to_string(i) + " has " +
             std::to_string(r.inputs[i].size()) + " values, expected " +
             std::to_string(int64_t{r.cols} * k);
  return "";
}

std::vector<float> random_input(size_t n) {
  std::mt19937_64 rng(0xba5e11e);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace

struct gpu_runner::slot {
  int device = 0;
  bool busy = false;
  std::unique_ptr<worker_process> process;
  bool hello_done = false;
  device_info info;
  std::list<std::pair<std::string, int64_t>> loaded;  // uploads, most recent first
  int64_t loaded_bytes = 0;
  bool lost = false;  // the last exchange found the worker gone without a reply
};

class gpu_runner::lease {
 public:
  lease(gpu_runner* runner, slot* s) : runner_(runner), slot_(s) {}
  lease(lease&& other) noexcept : runner_(other.runner_), slot_(other.slot_) {
    other.slot_ = nullptr;
  }
  ~lease() {
    if (slot_) runner_->release(*slot_);
  }
  slot& operator*() const { return *slot_; }

 private:
  gpu_runner* runner_;
  slot* slot_;
};

std::string gpu_runner::find_worker(const std::string& explicit_path) {
  if (!explicit_path.empty()) {
    if (executable(explicit_path)) return explicit_path;
    throw error("gpu runner: worker binary '" + explicit_path + "' is not an executable file");
  }
  if (const char* env = std::getenv("SPARSERL_GPU_WORKER"); env && *env) {
    if (executable(env)) return env;
    throw error(std::string("gpu runner: $SPARSERL_GPU_WORKER='") + env +
                "' is not an executable file");
  }
  std::vector<std::string> tried;
  const std::string beside = self_directory() + "/" + worker_binary;
  if (executable(beside)) return beside;
  tried.push_back(beside);
#ifdef SPARSERL_GPU_WORKER_BUILD_PATH
  if (executable(SPARSERL_GPU_WORKER_BUILD_PATH)) return SPARSERL_GPU_WORKER_BUILD_PATH;
  tried.push_back(SPARSERL_GPU_WORKER_BUILD_PATH);
#endif
  std::string where;
  for (const std::string& t : tried) where += (where.empty() ? "" : ", ") + t;
  throw error("gpu runner: " + std::string(worker_binary) + " not found (looked at " + where +
              "); build it (target " + worker_binary + ") or set SPARSERL_GPU_WORKER");
}

gpu_runner::gpu_runner(gpu_runner_options options) : options_(std::move(options)) {
  validate_timing_options(options_.timing);
  if (options_.devices.empty() || options_.workers_per_device < 1)
    throw error("gpu runner: need at least one device and one worker per device");
  if (options_.worker_command.empty()) command_ = {find_worker(options_.worker_path)};
  for (int device : options_.devices)
    for (int i = 0; i < options_.workers_per_device; ++i) {
      slots_.push_back(std::make_unique<slot>());
      slots_.back()->device = device;
    }
}

gpu_runner::~gpu_runner() {
  for (auto& s : slots_)
    if (s->process) s->process->stop(std::chrono::milliseconds(500));
}

int gpu_runner::workers_started() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return started_;
}

gpu_runner::lease gpu_runner::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    for (auto& s : slots_)
      if (!s->busy) {
        s->busy = true;
        return lease(this, s.get());
      }
    idle_.wait(lock);
  }
}

void gpu_runner::release(slot& s) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s.busy = false;
  }
  idle_.notify_one();
}

void gpu_runner::replace(slot& s) {
  if (s.process) s.process->stop(std::chrono::milliseconds(200));
  s.process.reset();
  s.hello_done = false;
  s.loaded.clear();
  s.loaded_bytes = 0;
  // Start the replacement now, so its CUDA initialisation overlaps whatever the caller does next.
  spawn(s);
}

std::string gpu_runner::spawn(slot& s) {
  if (s.process) return "";
  std::vector<std::string> argv = options_.worker_command;
  if (argv.empty()) argv = {command_[0], "--device", std::to_string(s.device)};
  try {
    s.process = std::make_unique<worker_process>(argv, options_.worker_env);
  } catch (const error& e) {
    return e.what();
  }
  s.hello_done = false;
  std::lock_guard<std::mutex> lock(mutex_);
  ++started_;
  return "";
}

std::string gpu_runner::ensure_started(slot& s) {
  if (std::string why = spawn(s); !why.empty()) return why;
  if (s.hello_done) return "";
  std::vector<char> reply;
  const auto deadline =
      worker_process::clock::now() + std::chrono::duration_cast<worker_process::clock::duration>(
                                         std::chrono::duration<double>(options_.start_timeout_s));
  const worker_process::io_status st = s.process->receive(reply, deadline);
  std::string why;
  if (st == worker_process::io_status::ok) {
    try {
      wire::reader r(reply);
      gpu_protocol::expect_kind(r, gpu_protocol::message::hello);
      s.info = gpu_protocol::decode_hello(r);
      if (s.info.ok) {
        s.hello_done = true;
        return "";
      }
      why = "gpu worker cannot use device " + std::to_string(s.device) + ": " + s.info.error;
    } catch (const error& e) {
      why = std::string("gpu worker sent a malformed hello: ") + e.what();
    }
  } else if (st == worker_process::io_status::timeout) {
    why = "gpu worker did not start within " + seconds_text(options_.start_timeout_s) + " s";
  } else if (st == worker_process::io_status::invalid) {
    why = "gpu worker sent a malformed hello frame";
  }
  // A child that closed its end gets a moment to exit by itself (for its exit status).
  const bool closed = st == worker_process::io_status::closed;
  const std::string ended = s.process->stop(std::chrono::milliseconds(closed ? 1000 : 0));
  const std::string log = s.process->take_log();
  if (why.empty()) {
    why = "gpu worker failed to start (" + ended + ")";
    if (!last_line(log).empty()) why += ": " + last_line(log);
  }
  s.process.reset();
  s.hello_done = false;
  s.info = device_info{};
  s.info.error = why;
  return why;
}

std::string gpu_runner::exchange(slot& s, const std::vector<char>& request,
                                 std::vector<char>& reply, double timeout_s, int64_t max_log_bytes,
                                 std::string& log) {
  const auto deadline =
      worker_process::clock::now() + std::chrono::duration_cast<worker_process::clock::duration>(
                                         std::chrono::duration<double>(timeout_s));
  worker_process::io_status st = s.process->send(request, deadline);
  if (st == worker_process::io_status::ok) st = s.process->receive(reply, deadline);
  s.lost = st == worker_process::io_status::closed;
  if (st == worker_process::io_status::ok) {
    append_bounded(log, s.process->take_log(), max_log_bytes);
    return "";
  }
  std::string why;
  if (st == worker_process::io_status::timeout) {
    s.process->stop();
    why = "timeout after " + seconds_text(std::round(timeout_s * 10) / 10) + " s";
  } else if (st == worker_process::io_status::invalid) {
    s.process->stop();
    why = "gpu worker sent a malformed frame";
  } else {
    // It closed its end: it is exiting. Tearing down a CUDA context can take seconds when many
    // share the GPU, so it gets exit_wait_s to be reaped with its own status.
    const auto wait = std::chrono::milliseconds(std::llround(options_.exit_wait_s * 1000));
    const std::string ended = s.process->stop(wait);
    if (ended == worker_process::killed_after_grace)
      why = "worker closed its connection without a reply and had not exited " +
            seconds_text(options_.exit_wait_s) + " s later (killed)";
    else
      why = (ended.rfind("signal", 0) == 0 ? "worker crashed: " : "worker exited: ") + ended;
  }
  const std::string stderr_text = s.process->take_log();
  append_bounded(log, stderr_text, max_log_bytes);
  if (st == worker_process::io_status::closed && !last_line(stderr_text).empty())
    why += ": " + last_line(stderr_text);
  replace(s);
  return why;
}

std::string gpu_runner::ensure_loaded(slot& s, const std::string& key, const format_arguments& args,
                                      double timeout_s, int64_t max_log_bytes, std::string& log) {
  for (auto it = s.loaded.begin(); it != s.loaded.end(); ++it)
    if (it->first == key) {
      s.loaded.splice(s.loaded.begin(), s.loaded, it);
      return "";
    }
  const int64_t bytes = argument_bytes(args);
  std::vector<std::string> evict;
  while (!s.loaded.empty() && s.loaded_bytes + bytes > options_.cache_bytes) {
    evict.push_back(s.loaded.back().first);
    s.loaded_bytes -= s.loaded.back().second;
    s.loaded.pop_back();
  }
  std::vector<char> reply;
  const double upload_s = timeout_s + static_cast<double>(bytes) / 1e9;  // >= 1 GB/s
  std::string why = exchange(s, gpu_protocol::encode_load(key, evict, args.args), reply, upload_s,
                             max_log_bytes, log);
  if (!why.empty()) return why;
  try {
    wire::reader r(reply);
    gpu_protocol::expect_kind(r, gpu_protocol::message::load_data);
    const gpu_protocol::status st = gpu_protocol::decode_status(r);
    if (st.fatal) replace(s);
    if (!st.ok) return st.failure;
  } catch (const error& e) {
    replace(s);
    return std::string("gpu worker sent a malformed reply: ") + e.what();
  }
  s.loaded.emplace_front(key, bytes);
  s.loaded_bytes += bytes;
  return "";
}

std::string gpu_runner::run_once(slot& s, const run_request& request, const run_limits& limits,
                                 std::vector<char>& reply, std::string& log) {
  const std::string key = upload_key(request);
  std::string failure = ensure_started(s);
  if (failure.empty())
    failure =
        ensure_loaded(s, key, *request.args, options_.timeout_margin_s, limits.max_log_bytes, log);
  if (!failure.empty()) return failure;
  const double trials = static_cast<double>(request.inputs.size());
  double timeout_s = limits.launch_timeout_s * trials + options_.timeout_margin_s;
  if (request.measure_time) timeout_s += options_.timing.max_wall_s + 2 * limits.launch_timeout_s;
  // The worker enforces the limit per trial and per timed run itself (and exits on expiry); this
  // watchdog only catches a worker that stops answering for another reason.
  return exchange(s,
                  gpu_protocol::encode_run(key, request, options_.timing, limits.launch_timeout_s),
                  reply, timeout_s, limits.max_log_bytes, log);
}

run_result gpu_runner::run(const run_request& request, const run_limits& limits) {
  run_result result;
  result.failure = check_request(request);
  if (!result.failure.empty()) return result;
  const int64_t k = request.op == sparse_op::spmm ? request.k : 1;
  // x, y and a scratch buffer per scratch slot (input-sized), besides the format arrays.
  int64_t scratch_buffers = 0;
  for (const kernel_arg& a : request.args->args) scratch_buffers += a.kind == arg_kind::scratch;
  const int64_t device_bytes =
      argument_bytes(*request.args) +
      (int64_t{request.rows} + request.cols * (1 + scratch_buffers)) * k * 4;
  if (device_bytes > limits.memory_bytes) {
    result.failure = "device memory of " + std::to_string(device_bytes) +
                     " bytes exceeds the limit of " + std::to_string(limits.memory_bytes);
    return result;
  }
  lease held = acquire();
  slot& s = *held;
  std::vector<char> reply;
  // A worker that vanishes without a reply (no CUDA error reported, no timeout) was not stopped by
  // the program's device code, which can only fault its context; the program gets one more try
  // on the replacement, and the verdict is a failure only when that worker is lost too.
  for (int attempt = 0; attempt < 2; ++attempt) {
    result.failure = run_once(s, request, limits, reply, result.log);
    if (result.failure.empty() || !s.lost) break;
    append_bounded(result.log, "sparserl: retried after: " + result.failure + "\n",
                   limits.max_log_bytes);
  }
  if (!result.failure.empty()) return result;
  try {
    wire::reader r(reply);
    gpu_protocol::expect_kind(r, gpu_protocol::message::run_program);
    gpu_protocol::run_program_reply decoded = gpu_protocol::decode_run_reply(r);
    if (decoded.result.fatal) replace(s);
    if (!decoded.result.ok) {
      result.failure = decoded.result.failure;
      return result;
    }
    if (decoded.trials.size() != request.inputs.size()) throw error("wrong number of trials");
    result.ok = true;
    result.trials = std::move(decoded.trials);
    if (decoded.timed) {
      result.kernel_ms = decoded.timing.median_ms;
      result.timing_method = decoded.timing.method;
      result.checked_runs = std::move(decoded.checked_runs);
    }
  } catch (const error& e) {
    replace(s);
    result.ok = false;
    result.failure = std::string("gpu worker sent a malformed reply: ") + e.what();
  }
  return result;
}

namespace {

// A wrong baseline must never set the bar: each algorithm's output is checked against the CPU
// reference exactly as a program's is, and one that fails is marked failed with the reason (so
// best() can never pick it).
void drop_wrong_algorithms(sparse_op op, const csr_matrix& a, int32_t k, cusparse_timings& t) {
  const reference_output ref = compute_reference(op, a, t.input, k);
  for (cusparse_algorithm& alg : t.algorithms) {
    if (!alg.ok) continue;
    const check_result check = check_output(ref, alg.output);
    if (check.ok) continue;
    alg.ok = false;
    alg.failure = "wrong result against the CPU reference: " + check.describe(op, k);
  }
}

}  // namespace

cusparse_timings gpu_runner::baseline_all(const baseline_request& request,
                                          std::vector<float> input) {
  cusparse_timings out;
  if (!request.matrix) {
    out.failure = "gpu runner: baseline request has no matrix";
    return out;
  }
  const csr_matrix& a = *request.matrix;
  const int64_t k = request.op == sparse_op::spmm ? request.k : 1;
  if (k < 1) {
    out.failure = "gpu runner: baseline needs k >= 1";
    return out;
  }
  if (input.empty()) input = random_input(static_cast<size_t>(int64_t{a.cols} * k));
  if (static_cast<int64_t>(input.size()) != int64_t{a.cols} * k) {
    out.failure = "gpu runner: baseline input has " + std::to_string(input.size()) +
                  " values, expected " + std::to_string(int64_t{a.cols} * k);
    return out;
  }
  lease held = acquire();
  slot& s = *held;
  if (!(out.failure = ensure_started(s)).empty()) return out;
  const double bytes = static_cast<double>(a.nnz()) * 8 + (a.rows + a.cols) * 4.0 * k;
  constexpr int algorithms = 3;
  const double timeout_s =
      options_.timeout_margin_s + bytes / 1e9 + algorithms * (options_.timing.max_wall_s + 5);
  std::vector<char> reply;
  out.failure = exchange(
      s,
      gpu_protocol::encode_baseline(request.op, a, static_cast<int32_t>(k), input, options_.timing),
      reply, timeout_s, 64 * 1024, out.log);
  out.input = std::move(input);
  if (!out.failure.empty()) return out;
  try {
    wire::reader r(reply);
    gpu_protocol::expect_kind(r, gpu_protocol::message::baseline);
    const gpu_protocol::status st = gpu_protocol::decode_status(r);
    out.algorithms = gpu_protocol::decode_algorithms(r);
    if (st.fatal) replace(s);
    out.ok = st.ok;
    out.failure = st.failure;
  } catch (const error& e) {
    replace(s);
    out.failure = std::string("gpu worker sent a malformed reply: ") + e.what();
  }
  if (out.ok) drop_wrong_algorithms(request.op, a, static_cast<int32_t>(k), out);
  return out;
}

std::optional<baseline_result> gpu_runner::baseline(const baseline_request& request) {
  const cusparse_timings all = baseline_all(request);
  baseline_result out;
  if (!all.ok) {
    out.failure = "cuSPARSE baseline: " + all.failure;
    return out;
  }
  for (const cusparse_algorithm& a : all.algorithms)
    if (!a.ok) out.skipped += (out.skipped.empty() ? "" : "; ") + a.name + ": " + a.failure;
  const cusparse_algorithm* best = all.best();
  if (!best) {
    out.failure = "cuSPARSE baseline: no algorithm ran correctly: " + out.skipped;
    return out;
  }
  out.ok = true;
  out.name = best->name;
  out.algorithm = best->name.substr(best->name.find(' ') + 1);
  out.ms = best->timing.median_ms;
  out.timing_method = best->timing.method;
  return out;
}

bandwidth_result gpu_runner::copy_bandwidth(int64_t bytes) {
  bandwidth_result out;
  out.bytes = bytes;
  if (bytes <= 0) {
    out.failure = "gpu runner: copy size must be positive";
    return out;
  }
  lease held = acquire();
  slot& s = *held;
  if (!(out.failure = ensure_started(s)).empty()) return out;
  gpu_protocol::copy_bandwidth_request request;
  request.bytes = bytes;
  request.timing = options_.timing;
  std::vector<char> reply;
  out.failure =
      exchange(s, gpu_protocol::encode_copy_bandwidth(request), reply,
               options_.timeout_margin_s + options_.timing.max_wall_s + 10, 64 * 1024, out.log);
  if (!out.failure.empty()) return out;
  try {
    wire::reader r(reply);
    gpu_protocol::expect_kind(r, gpu_protocol::message::copy_bandwidth);
    const gpu_protocol::status st = gpu_protocol::decode_status(r);
    out.bytes = r.get<int64_t>();
    out.timing = gpu_protocol::decode_timing_summary(r);
    if (st.fatal) replace(s);
    out.ok = st.ok;
    out.failure = st.failure;
    if (out.ok && out.timing.median_ms > 0)
      out.gbps = 2.0 * static_cast<double>(out.bytes) / (out.timing.median_ms * 1e6);
  } catch (const error& e) {
    replace(s);
    out.ok = false;
    out.failure = std::string("gpu worker sent a malformed reply: ") + e.what();
  }
  return out;
}

device_info gpu_runner::device() {
  lease held = acquire();
  slot& s = *held;
  ensure_started(s);
  return s.info;
}

}  // namespace sparserl
