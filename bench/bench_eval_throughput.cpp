// Sustained evaluation throughput of the GPU worker pool: programs per second, each parsed,
// screened, NVRTC-compiled (every source distinct, so no compile-cache hits), verified (3 trials)
// and timed, on a warm pool and a 1M-nnz random matrix (100000^2, density 1e-4): what PPO's reward
// sees once a run is going. A warm-up round, not timed, starts every worker, computes the cuSPARSE
// baseline and the trial inputs (`sparserl tune` counts those in its wall time). Skipped without a
// GPU. SPARSERL_THROUGHPUT_PROGRAMS sets the programs per measurement (default 128).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "eval/evaluator.h"
#include "eval/gpu_runner.h"
#include "kernel/expert_library.h"
#include "sparse/features.h"
#include "sparse/generators.h"

namespace {

using namespace sparserl;

const csr_matrix& random_1m() {
  static const csr_matrix a = [] {
    generator_spec spec;
    spec.family = "random";
    spec.rows = spec.cols = 100000;
    spec.density = 1e-4;
    spec.seed = 3;
    return generate_matrix(spec);
  }();
  return a;
}

// The expert space of the matrix, cycled; a numbered comment makes each source new to the cache.
std::vector<kernel_program> distinct_programs(size_t first, size_t count) {
  const std::vector<expert_config> space =
      expert_space(sparse_op::spmv, compute_features(random_1m()), 1);
  std::vector<kernel_program> out;
  for (size_t i = first; i < first + count; ++i) {
    kernel_program p = emit_program(space[i % space.size()]);
    p.source += "\n// throughput variant " + std::to_string(i) + "\n";
    out.push_back(std::move(p));
  }
  return out;
}

// Evaluates `programs` with `threads` concurrent callers; returns how many were correct.
int evaluate_all(evaluator& eval, const eval_task& task,
                 const std::vector<kernel_program>& programs, int threads) {
  std::atomic<size_t> next{0};
  std::atomic<int> correct{0};
  auto work = [&] {
    for (size_t i = next++; i < programs.size(); i = next++)
      if (eval.evaluate_program(task, programs[i]).correct) ++correct;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return correct;
}

void bm_eval_throughput(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  gpu_runner_options options;
  options.workers_per_device = workers;
  std::unique_ptr<gpu_runner> runner;
  try {
    runner = std::make_unique<gpu_runner>(options);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const device_info info = runner->device();
  if (!info.ok) {
    state.SkipWithError(("no GPU: " + info.error).c_str());
    return;
  }
  eval_options eo;
  eo.compile.arch = "sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor);
  evaluator eval(*runner, eo);
  const eval_task task{sparse_op::spmv, &random_1m(), 1, "random_1m"};
  const char* env = std::getenv("SPARSERL_THROUGHPUT_PROGRAMS");
  const size_t count = env ? static_cast<size_t>(std::atoll(env)) : 128;
  evaluate_all(eval, task, distinct_programs(1u << 20, static_cast<size_t>(workers)), workers);
  size_t offset = 0;
  double seconds = 0;
  int correct = 0;
  for (auto _ : state) {
    const std::vector<kernel_program> programs = distinct_programs(offset, count);
    offset += count;
    const auto t0 = std::chrono::steady_clock::now();
    correct += evaluate_all(eval, task, programs, workers);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(t);
    seconds += t;
  }
  state.counters["programs_per_s"] = static_cast<double>(offset) / seconds;
  state.counters["correct"] = correct;
  state.counters["programs"] = static_cast<double>(offset);
}

BENCHMARK(bm_eval_throughput)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(8)
    ->Arg(16)
    ->UseManualTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
