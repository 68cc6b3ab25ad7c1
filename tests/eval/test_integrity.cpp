// Reward integrity on the CPU emulator (issue 16): programs that keep state across launches
// cannot pass, and a spinning program is judged a timeout within the per-trial limit + 2 s, after
// which the same runner judges the next program normally. The programs are the hostile corpus's
// (tests/eval/hostile/); the GPU side of the same checks is scripts/gpu-integrity.sh.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "eval/cpu_runner.h"
#include "eval/evaluator.h"
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

}  // namespace
}  // namespace sparserl
