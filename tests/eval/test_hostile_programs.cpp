// The hostile-program corpus (tests/eval/hostile/: one completion per file, its expected verdicts
// in the header comment) through the whole harness, on the CPU emulator and on the GPU (the GPU
// suites skip without one). Header keys, one per line:
//   // what: <what the program tries>
//   // expect: <class> [text]          the verdict on both executors: its class, and text the
//   // expect-cpu: / expect-gpu: ...   failure must contain; the per-executor lines override it
//   // sandbox-cpu: / sandbox-gpu: <class> [text]   the runner alone, the source screen (and, for
//                                      the CPU, NVRTC) bypassed: the sandbox's own verdict
//   // op: spmm                        (default spmv)
//   // slow                            runs into a time limit: once in the 200-program run
// Classes: correct, wrong, runtime, launch, compile, rejected, no-program; "failed" is any class
// but correct and "any" asserts nothing (the rest of such a line is the reason). Sandbox classes:
// ran, runtime, compile, rejected. Other comment lines are commentary.
//
// Every run also checks that nothing reached the host (the programs that try write
// /tmp/sparserl-hostile-pwned), and that runner logs stay within run_limits::max_log_bytes. The
// 200-program run checks that the executor keeps serving: every verdict right, no leaked child
// processes, descriptors, heap or (GPU) device memory.
#include <dirent.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "eval/compiler.h"
#include "eval/cpu_runner.h"
#include "eval/evaluator.h"
#include "eval/gpu_runner.h"
#include "kernel/abi.h"
#include "kernel/completion.h"
#include "random_data.h"
#include "sparse/generators.h"

#if SPARSERL_SANITIZE
// From the ASan runtime (sanitizer/allocator_interface.h, which GCC does not ship).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace sparserl {
namespace {

namespace fs = std::filesystem;

const fs::path corpus_dir = fs::path(SPARSERL_SOURCE_DIR) / "tests/eval/hostile";
const char* const pwned_marker = "/tmp/sparserl-hostile-pwned";

// ---- the corpus ---------------------------------------------------------------------------------

struct expectation {
  std::string kind;  // a class, "failed" or "any"; "" when the file gives none
  std::string text;  // what the failure must contain
};

struct hostile_program {
  std::string name;  // file stem
  std::string completion;
  sparse_op op = sparse_op::spmv;
  bool slow = false;
  std::map<std::string, expectation> expect;  // by key: "expect", "expect-cpu", "sandbox-gpu", ...

  // The key's expectation for `executor` ("cpu" or "gpu"), the shared one as the fallback.
  expectation verdict_for(const std::string& executor) const {
    auto it = expect.find("expect-" + executor);
    if (it == expect.end()) it = expect.find("expect");
    return it == expect.end() ? expectation{} : it->second;
  }
  expectation sandbox_for(const std::string& executor) const {
    auto it = expect.find("sandbox-" + executor);
    return it == expect.end() ? expectation{} : it->second;
  }
};

expectation parse_expectation(const std::string& value) {
  expectation e;
  const size_t space = value.find(' ');
  e.kind = value.substr(0, space);
  if (space != std::string::npos && e.kind != "any" && e.kind != "failed")
    e.text = value.substr(space + 1);
  return e;
}

hostile_program load_program(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  hostile_program p;
  p.name = path.stem().string();
  p.completion = all.str();
  std::istringstream lines(p.completion);
  for (std::string line; std::getline(lines, line) && line.rfind("//", 0) == 0;) {
    const std::string body = line.size() > 3 ? line.substr(3) : "";
    const size_t colon = body.find(": ");
    const std::string key = body.substr(0, colon);
    if (body == "slow") p.slow = true;
    if (colon == std::string::npos) continue;
    const std::string value = body.substr(colon + 2);
    if (key == "op" && value == "spmm") p.op = sparse_op::spmm;
    if (key.rfind("expect", 0) == 0 || key.rfind("sandbox", 0) == 0)
      p.expect[key] = parse_expectation(value);
  }
  return p;
}

const std::vector<hostile_program>& corpus() {
  static const std::vector<hostile_program> programs = [] {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(corpus_dir))
      if (entry.path().extension() == ".cu") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    std::vector<hostile_program> out;
    for (const fs::path& f : files) out.push_back(load_program(f));
    return out;
  }();
  return programs;
}

std::vector<std::string> corpus_names() {
  std::vector<std::string> names;
  for (const hostile_program& p : corpus()) names.push_back(p.name);
  return names;
}

const hostile_program& program_named(const std::string& name) {
  for (const hostile_program& p : corpus())
    if (p.name == name) return p;
  throw std::runtime_error("no corpus program " + name);
}

// ---- verdicts -----------------------------------------------------------------------------------

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::string verdict_class(const verdict& v) {
  if (!v.extracted) return "no-program";
  if (starts_with(v.failure, "rejected:")) return "rejected";
  if (starts_with(v.failure, "format:")) return "format";
  if (!v.compiled) return "compile";
  if (starts_with(v.failure, "launch:")) return "launch";
  if (starts_with(v.failure, "runtime:")) return "runtime";
  return v.correct ? "correct" : "wrong";
}

::testing::AssertionResult meets(const std::string& kind, const std::string& failure,
                                 const expectation& want) {
  if (want.kind == "any") return ::testing::AssertionSuccess();
  const bool class_ok =
      want.kind == "failed" ? kind != "correct" && kind != "ran" : kind == want.kind;
  if (class_ok && failure.find(want.text) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << kind << " (" << failure << "), expected "
                                       << want.kind << (want.text.empty() ? "" : " containing '")
                                       << want.text << (want.text.empty() ? "" : "'");
}

// ---- the task and the executors -----------------------------------------------------------------

csr_matrix task_matrix() {
  generator_spec spec;
  spec.family = "random";
  spec.rows = 300;
  spec.density = 0.02;
  spec.seed = 7;
  return generate_matrix(spec);
}

// Limits small enough that the corpus runs in CI: every hostile program ends at one of them.
eval_options test_options() {
  eval_options o;
  o.trials = 2;
  o.measure_time = false;
  o.compile.timeout_s = 5;
  o.compile.memory_bytes = int64_t{1} << 30;
  o.limits.launch_timeout_s = 1;
  o.limits.max_log_bytes = 16 * 1024;
  return o;
}

bool gpu_present() {
  static const bool present = [] {
    gpu_runner probe;
    return probe.device().ok;
  }();
  return present;
}

std::unique_ptr<program_runner> make_runner(const std::string& executor) {
  if (executor == "gpu") {
    gpu_runner_options o;
    o.timeout_margin_s = 3;
    return std::make_unique<gpu_runner>(o);
  }
  cpu_runner_options o;  // the default, shared cache: the suites reuse each other's builds
  o.compile_timeout_s = 30;
  o.startup_allowance_s = 1;
  return std::make_unique<cpu_runner>(o);
}

// The LAUNCH line of `entry`, as the evaluator picks it.
const launch_spec& launch_for(const kernel_program& p, const std::string& entry) {
  for (const launch_spec& spec : p.launches)
    if (spec.entry == entry) return spec;
  return p.launches.front();
}

// The runner alone on `program`: no source screen; NVRTC only where the runner needs a cubin.
std::string sandbox_run(program_runner& runner, const hostile_program& hp, const csr_matrix& a,
                        const eval_options& options, std::string& failure) {
  const int32_t k = hp.op == sparse_op::spmm ? 4 : 1;
  const parse_result parsed = parse_completion(hp.completion, hp.op);
  if (!parsed.program) {
    failure = parsed.error;
    return "no-program";
  }
  const kernel_program& program = *parsed.program;
  const format_arguments args = build_arguments(hp.op, a, program, k);
  run_request request;
  request.op = hp.op;
  request.rows = a.rows;
  request.cols = a.cols;
  request.k = k;
  request.program = &program;
  request.args = &args;
  request.data_id = "hostile-sandbox|" + hp.name;
  for (const entry_point& e : entry_points(hp.op, program.format)) {
    request.entries.push_back(e.name);
    request.geometry.push_back(compute_geometry(launch_for(program, e.name), e, args, k));
  }
  request.device_source = parameter_defines(program) + program.source;
  compile_result compiled;
  if (std::string(runner.name()) == "gpu") {
    compiled = compile_device_source(request.device_source, options.compile);
    if (!compiled.ok) {
      failure = compiled.error;
      return "compile";
    }
    request.cubin = &compiled.cubin;
  }
  for (int t = 0; t < options.trials; ++t)
    request.inputs.push_back(testing::random_vector(static_cast<size_t>(a.cols) * k, 100 + t));
  std::memcpy(&request.poison, &output_poison_bits, sizeof(float));
  const run_result r = runner.run(request, options.limits);
  // The log holds what the program printed: bounded, whatever it does (plus a truncation note).
  EXPECT_LE(r.log.size(), static_cast<size_t>(options.limits.max_log_bytes) + 64) << hp.name;
  failure = r.failure;
  if (r.ok) return r.trials.size() == request.inputs.size() ? "ran" : "runtime";
  if (starts_with(r.failure, "emulator compile")) return "compile";
  if (starts_with(r.failure, "rejected:")) return "rejected";
  return "runtime";
}

// ---- process resources --------------------------------------------------------------------------

std::vector<pid_t> child_processes() {  // zombies included: an unreaped child is a leak too
  std::vector<pid_t> children;
  DIR* proc = ::opendir("/proc");
  if (!proc) return children;
  while (const dirent* e = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(line.substr(paren + 2));
    char state = 0;
    pid_t parent = 0;
    rest >> state >> parent;
    if (parent == ::getpid()) children.push_back(pid);
  }
  ::closedir(proc);
  return children;
}

size_t open_descriptors() {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) n += !entry.path().empty();
  return n;
}

int64_t heap_bytes() {  // live allocations, not RSS (allocator caches and ASan's quarantine)
#if SPARSERL_SANITIZE
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 m = ::mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
#endif
}

// Device memory the given processes hold, from nvidia-smi (MiB); -1 when it cannot tell.
int64_t device_mib(const std::vector<pid_t>& pids) {
  FILE* smi = ::popen(
      "nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null",
      "r");
  if (!smi) return -1;
  int64_t total = 0;
  bool any = false;
  char line[256];
  while (std::fgets(line, sizeof(line), smi)) {
    long pid = 0, mib = 0;
    if (std::sscanf(line, "%ld, %ld", &pid, &mib) != 2) continue;
    any = true;
    for (pid_t p : pids) total += p == pid ? mib : 0;
  }
  return ::pclose(smi) == 0 && any ? total : -1;
}

// ---- the suites ---------------------------------------------------------------------------------

class hostile : public ::testing::TestWithParam<std::string> {
 protected:
  virtual std::string executor() const = 0;
  void SetUp() override {
    if (executor() == "gpu" && !gpu_present()) GTEST_SKIP() << "no GPU or CUDA driver here";
    std::remove(pwned_marker);
  }
  void check_program(const hostile_program& hp) {
    auto runner = make_runner(executor());
    const eval_options options = test_options();
    evaluator judge(*runner, options);
    const csr_matrix a = task_matrix();
    const eval_task task{hp.op, &a, hp.op == sparse_op::spmm ? 4 : 1, "hostile"};
    const expectation want = hp.verdict_for(executor());
    ASSERT_FALSE(want.kind.empty()) << hp.name << " has no expect line";
    const verdict v = judge.evaluate(task, hp.completion);
    EXPECT_TRUE(meets(verdict_class(v), v.failure, want)) << hp.name;
    if (want.kind == "any" || want.kind == "failed")  // for the record: what this executor said
      std::printf("%s on %s: %s (%s)\n", hp.name.c_str(), executor().c_str(),
                  verdict_class(v).c_str(), v.failure.c_str());
    EXPECT_NE(::access(pwned_marker, F_OK), 0) << hp.name << " reached the host";
    const expectation sandbox = hp.sandbox_for(executor());
    if (sandbox.kind.empty()) return;
    std::string failure;
    const std::string kind = sandbox_run(*runner, hp, a, options, failure);
    EXPECT_TRUE(meets(kind, failure, sandbox)) << hp.name << " with the screen bypassed";
    EXPECT_NE(::access(pwned_marker, F_OK), 0) << hp.name << " reached the host (screen bypassed)";
  }
};

class hostile_cpu : public hostile {
  std::string executor() const override { return "cpu"; }
};
class hostile_gpu : public hostile {
  std::string executor() const override { return "gpu"; }
};

TEST_P(hostile_cpu, verdict) { check_program(program_named(GetParam())); }
TEST_P(hostile_gpu, verdict) { check_program(program_named(GetParam())); }

INSTANTIATE_TEST_SUITE_P(corpus, hostile_cpu, ::testing::ValuesIn(corpus_names()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(corpus, hostile_gpu, ::testing::ValuesIn(corpus_names()),
                         [](const auto& info) { return info.param; });

// 200 programs in a row on one executor: good ones alternating with every hostile one (the slow
// ones once, the rest cycling), each verdict right, and afterwards no more child processes than
// the pool keeps, no more descriptors and (beyond the warm-up pass) no heap or device memory
// growth.
class hostile_mixed : public ::testing::TestWithParam<std::string> {};

TEST_P(hostile_mixed, two_hundred_in_a_row) {
  const std::string executor = GetParam();
  if (executor == "gpu" && !gpu_present()) GTEST_SKIP() << "no GPU or CUDA driver here";
  std::vector<const hostile_program*> good, bad, slow;
  for (const hostile_program& p : corpus()) {
    const std::string kind = p.verdict_for(executor).kind;
    (kind == "correct" ? good : p.slow ? slow : bad).push_back(&p);
  }
  ASSERT_FALSE(good.empty());
  ASSERT_FALSE(bad.empty());
  std::vector<const hostile_program*> order;
  for (size_t i = 0; order.size() < 200; ++i) {
    order.push_back(good[i % good.size()]);
    order.push_back(i < slow.size() ? slow[i] : bad[(i - slow.size()) % bad.size()]);
  }
  auto runner = make_runner(executor);
  evaluator judge(*runner, test_options());
  const csr_matrix a = task_matrix();
  std::remove(pwned_marker);
  const size_t children_before = child_processes().size(), fds_before = open_descriptors();
  const size_t warm_up = 2 * (slow.size() + bad.size());
  int64_t heap_warm = 0, device_warm = -1;
  for (size_t i = 0; i < order.size(); ++i) {
    const hostile_program& hp = *order[i];
    const eval_task task{hp.op, &a, hp.op == sparse_op::spmm ? 4 : 1, "hostile-mixed"};
    const verdict v = judge.evaluate(task, hp.completion);
    ASSERT_TRUE(meets(verdict_class(v), v.failure, hp.verdict_for(executor)))
        << "program " << i << ": " << hp.name;
    ASSERT_NE(::access(pwned_marker, F_OK), 0) << hp.name << " reached the host";
    if (i + 1 == warm_up) heap_warm = heap_bytes();
    // A worker replaced just now may not be listed yet: the first reading that sees one.
    if (i + 1 >= warm_up && device_warm < 0 && executor == "gpu")
      device_warm = device_mib(child_processes());
  }
  const std::vector<pid_t> children = child_processes();
  if (executor == "gpu") {  // the pool's workers stay; replaced ones are reaped
    auto* pool = dynamic_cast<gpu_runner*>(runner.get());
    EXPECT_LE(children.size(), children_before + static_cast<size_t>(pool->pool_size()));
    const int64_t device_now = device_mib(children);
    if (device_warm >= 0 && device_now >= 0) {
      EXPECT_LE(device_now, device_warm + 256);
    }
    std::printf("gpu: %d workers started, device memory %lld -> %lld MiB\n",
                pool->workers_started(), static_cast<long long>(device_warm),
                static_cast<long long>(device_now));
  } else {
    EXPECT_EQ(children.size(), children_before);
  }
  const int64_t heap_growth = heap_bytes() - heap_warm;
  std::printf("%s: heap growth after warm-up %lld bytes\n", executor.c_str(),
              static_cast<long long>(heap_growth));
  EXPECT_LT(heap_growth, int64_t{8} << 20);
  runner.reset();  // the pool's own pipes go with it
  EXPECT_EQ(open_descriptors(), fds_before);
}

INSTANTIATE_TEST_SUITE_P(executors, hostile_mixed, ::testing::Values("cpu", "gpu"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sparserl
