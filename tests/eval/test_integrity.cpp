// Reward integrity on the CPU emulator (issue 16): programs that keep state across launches
// cannot pass, and a spinning program is judged a timeout within the per-trial limit + 2 s, after
// which the same runner judges the next program normally. The programs are the hostile corpus's
// (tests/eval/hostile/); the GPU side of the same checks is scripts/gpu-integrity.sh.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "eval/checked_runs.h"
#include "eval/cpu_runner.h"
#include "eval/evaluator.h"
#include "eval/timed_cpu_runner.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;

std::string corpus_program(const std::string& name) {
  std::ifstream in(fs::path(SPARSERL_SOURCE_DIR) / "tests/eval/hostile" / (name + ".cu"));
  std::stringstream all;
  all << in.rdbuf();
  EXPECT_FALSE(all.str().empty()) << name;
  return all.str();
}

csr_matrix small_matrix() {
  generator_spec spec;
  spec.family = "random";
  spec.rows = 200;
  spec.density = 0.03;
  spec.seed = 11;
  return generate_matrix(spec);
}

eval_options cpu_options(int trials, double limit_s) {
  eval_options o;
  o.trials = trials;
  o.measure_time = false;
  o.compile.timeout_s = 10;
  o.limits.launch_timeout_s = limit_s;
  return o;
}

std::unique_ptr<cpu_runner> make_cpu_runner() {
  cpu_runner_options o;
  o.compile_timeout_s = 60;
  o.startup_allowance_s = 1;
  return std::make_unique<cpu_runner>(o);
}

TEST(integrity_cpu, spinning_program_times_out_within_limit_and_next_is_judged) {
  constexpr double limit_s = 1;
  auto runner = make_cpu_runner();
  evaluator judge(*runner, cpu_options(3, limit_s));
  const csr_matrix a = small_matrix();
  const eval_task task{sparse_op::spmv, &a, 1, "integrity-spin"};
  const std::string spin = corpus_program("spin_until_flag");
  // The first evaluation builds the program (NVRTC, g++); the second is launch to verdict alone.
  const verdict first = judge.evaluate(task, spin);
  EXPECT_NE(first.failure.find("timeout after"), std::string::npos) << first.failure;
  const auto t0 = std::chrono::steady_clock::now();
  const verdict v = judge.evaluate(task, spin);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(v.correct);
  EXPECT_EQ(v.failure.rfind("runtime: timeout after", 0), 0u) << v.failure;
  EXPECT_NE(v.failure.find("in trial 1"), std::string::npos) << v.failure;
  EXPECT_LE(seconds, limit_s + 2) << "launch to verdict";
  std::printf("spinning program: launch to verdict %.2f s (limit %.0f s per trial, 3 trials)\n",
              seconds, limit_s);

  const verdict next = judge.evaluate(task, corpus_program("good_csr_thread_per_row"));
  EXPECT_TRUE(next.correct) << next.failure;
}

TEST(integrity_cpu, lazy_after_n_launches_is_wrong) {
  std::string lazy = corpus_program("lazy_after_launches");
  const std::string define = "#define LAZY_AFTER 1";
  ASSERT_NE(lazy.find(define), std::string::npos);
  lazy.replace(lazy.find(define), define.size(), "#define LAZY_AFTER 3");
  auto runner = make_cpu_runner();
  evaluator judge(*runner, cpu_options(4, 5));
  const csr_matrix a = small_matrix();
  const verdict v = judge.evaluate({sparse_op::spmv, &a, 1, "integrity-lazy"}, lazy);
  EXPECT_TRUE(v.ran) << v.failure;
  EXPECT_FALSE(v.correct);
  EXPECT_EQ(v.failure.rfind("trial 4: wrong result", 0), 0u) << v.failure;
}

TEST(integrity_cpu, memoiser_gets_nothing_from_its_cache) {
  auto runner = make_cpu_runner();
  evaluator judge(*runner, cpu_options(3, 5));
  const csr_matrix a = small_matrix();
  const verdict v = judge.evaluate({sparse_op::spmv, &a, 1, "integrity-memo"},
                                   corpus_program("memoise_on_input_fingerprint"));
  // Fresh x every trial: the cache never hits, so the program computes every y itself.
  EXPECT_TRUE(v.ran) << v.failure;
  EXPECT_TRUE(v.correct) << v.failure;
  EXPECT_EQ(v.trials, 3);
}

TEST(integrity_evaluator, timed_runs_are_verified_against_their_own_inputs) {
  auto cpu = make_cpu_runner();
  timed_cpu_runner timed(*cpu, 6, 2);
  eval_options o = cpu_options(2, 5);
  o.measure_time = true;
  evaluator judge(timed, o);
  const csr_matrix a = small_matrix();
  const eval_task task{sparse_op::spmv, &a, 1, "integrity-timed"};

  const verdict good = judge.evaluate(task, corpus_program("good_csr_thread_per_row"));
  EXPECT_TRUE(good.correct) << good.failure;
  EXPECT_EQ(good.checked_timed_runs, 2);
  ASSERT_TRUE(good.kernel_ms.has_value());

  // Right in both verification trials (launches 1 and 8), lazy in launches 4 to 7 (timed runs 3
  // to 6): only the timed runs' checks can catch it.
  std::string lazy = corpus_program("lazy_after_launches");
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"#define LAZY_AFTER 1", "#define LAZY_AFTER 3"},
        {"#define LAZY_UNTIL 0xffffffffu", "#define LAZY_UNTIL 7"}}) {
    ASSERT_NE(lazy.find(from), std::string::npos) << from;
    lazy.replace(lazy.find(from), from.size(), to);
  }
  const verdict v = judge.evaluate(task, lazy);
  EXPECT_FALSE(v.correct);
  EXPECT_EQ(v.failure.rfind("timed run 5: wrong result", 0), 0u) << v.failure;
  EXPECT_FALSE(v.kernel_ms.has_value());  // a wrong program earns no speed
}

TEST(integrity_evaluator, fewer_than_two_checked_timed_runs_is_a_runtime_failure) {
  auto cpu = make_cpu_runner();
  timed_cpu_runner timed(*cpu, 3, 1);
  eval_options o = cpu_options(2, 5);
  o.measure_time = true;
  evaluator judge(timed, o);
  const csr_matrix a = small_matrix();
  const verdict v = judge.evaluate({sparse_op::spmv, &a, 1, "integrity-one-check"},
                                   corpus_program("good_csr_thread_per_row"));
  EXPECT_FALSE(v.correct);
  EXPECT_EQ(v.failure.rfind("runtime: the runner returned 1 timed runs", 0), 0u) << v.failure;
}

// Runs fed to the sampler as the worker does: the caller's copy holds the latest run's data, and a
// kept record is filled from it.
std::vector<timed_run_check> sample(int runs, int count, uint64_t seed) {
  checked_runs sampler(count, seed);
  int held = 0;  // the run whose data the caller's copy holds
  auto fill = [&](timed_run_check& c) {
    EXPECT_EQ(c.run, held);
    c.input.assign(3, static_cast<float>(held));
    c.output.assign(2, static_cast<float>(-held));
  };
  for (int r = 1; r <= runs; ++r) {
    EXPECT_EQ(sampler.run_finished(fill), r);
    held = r;
  }
  return sampler.take(fill);
}

TEST(checked_runs, keeps_the_last_run_and_others_with_their_own_data) {
  EXPECT_EQ(sample(1, 3, 1).size(), 1u);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const std::vector<timed_run_check> kept = sample(40, 3, seed);
    ASSERT_EQ(kept.size(), 3u);
    EXPECT_EQ(kept.back().run, 40);
    for (size_t i = 0; i < kept.size(); ++i) {
      if (i) {
        EXPECT_LT(kept[i - 1].run, kept[i].run);
      }
      EXPECT_EQ(kept[i].input, std::vector<float>(3, static_cast<float>(kept[i].run)));
      EXPECT_EQ(kept[i].output, std::vector<float>(2, static_cast<float>(-kept[i].run)));
    }
  }
}

TEST(checked_runs, every_earlier_run_is_equally_likely_to_be_checked) {
  constexpr int runs = 10, count = 3, samples = 4000;
  std::vector<int> chosen(runs + 1, 0);
  for (uint64_t seed = 0; seed < samples; ++seed)
    for (const timed_run_check& c : sample(runs, count, seed)) ++chosen[static_cast<size_t>(c.run)];
  EXPECT_EQ(chosen[runs], samples);
  const double expected = static_cast<double>(count - 1) / (runs - 1);  // 2 of the 9 earlier runs
  for (int r = 1; r < runs; ++r) {
    const double share = static_cast<double>(chosen[static_cast<size_t>(r)]) / samples;
    EXPECT_NEAR(share, expected, 0.035) << "run " << r;
  }
}

}  // namespace
}  // namespace sparserl
