// The training pipeline through the real binary: the original SparseRL commands verbatim on small
// data, kill -9 in the middle of a run and --resume (the losses must equal an uninterrupted run's),
// and the quickstart end to end.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "cli_testing.h"
#include "free_port.h"

namespace sparserl::testing {
namespace {

std::vector<double> losses(const fs::path& metrics) {
  std::vector<double> out;
  std::istringstream in(slurp(metrics));
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find("\"loss\":");
    if (at != std::string::npos) out.push_back(std::stod(line.substr(at + 7)));
  }
  return out;
}

// Starts `command` through sh in its own process group, so that one kill reaches sparserl too.
pid_t start_group(const std::string& command) {
  const pid_t child = fork();
  if (child == 0) {
    setsid();
    execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
    _exit(127);
  }
  return child;
}

// SIGKILLs the group and returns its wait status.
int kill_group(pid_t child) {
  kill(-child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

class train_cli : public cli_test {
 protected:
  // Builds a 4-matrix SFT set and sets `args` to a train-sft run of a tiny model on it with
  // `options`, ending in "-o " for the run directory.
  void tiny_sft(const std::string& options, std::string& args) const {
    const run_result d =
        run("dataset build --generate 4 --device cpu --no-progress -o " + path("sft.jsonl"));
    ASSERT_EQ(d.code, 0) << d.err;
    args = "train-sft --data " + path("sft.jsonl") + " " + options +
           " --device cpu --no-progress --init-hidden 32 --init-layers 1 --init-intermediate 64 "
           "--max-len 256 -o ";
  }

  // Runs `sparserl ARGS` as ranks 0 and 1 of a torchrun-style launch on loopback; the code is 0
  // when both exited 0, err holds rank 0's stderr then rank 1's.
  run_result run_two_ranks(const std::string& args) const {
    const std::string env =
        "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port()) +
        " OMP_NUM_THREADS=1 ";
    const std::string rank = env + std::string(SPARSERL_CLI) + " " + args;
    const std::string command = "cd " + dir_.string() + " && (RANK=1 " + rank +
                                " 2>rank1.err & RANK=0 " + rank +
                                " 2>rank0.err; r0=$?; wait $!; r1=$?; "
                                "test $r0 -eq 0 -a $r1 -eq 0) >/dev/null </dev/null";
    run_result r;
    r.code = std::system(command.c_str()) == 0 ? 0 : 1;
    r.err = slurp(dir_ / "rank0.err") + slurp(dir_ / "rank1.err");
    return r;
  }

  // Runs `sparserl ARGS` with the temp directory as the working directory, as the original's
  // commands expect (relative dataset/ and runs/ paths).
  run_result run_here(const std::string& args) const {
    const std::string out = path("stdout"), err = path("stderr");
    const std::string command = "cd " + dir_.string() + " && " + SPARSERL_CLI + " " + args + " >" +
                                out + " 2>" + err + " </dev/null";
    const int status = std::system(command.c_str());
    run_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
};

TEST_F(train_cli, the_original_commands_run_on_small_data) {
  fs::create_directories(dir_ / "dataset");
  fs::create_directories(dir_ / "sft_data");
  ASSERT_EQ(run("matrix gen stencil2d --rows 144 -o " + path("dataset/a.mtx")).code, 0);
  ASSERT_EQ(run("matrix gen banded --rows 100 --seed 2 -o " + path("dataset/b.mtx")).code, 0);
  ASSERT_EQ(run("matrix gen random --rows 120 --density 0.05 -o " + path("dataset/c.mtx")).code, 0);
  ASSERT_EQ(run("dataset build --generate 5 --device cpu --no-progress -o " +
                path("sft_data/sft_samples.jsonl"))
                .code,
            0);

  // The seed's spelling (train_sft); the other tests here use train-sft.
  run_result a = run_here("train_sft --dataset-dir dataset --max-nnz 128 --steps 2 --device cpu");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_THAT(a.out, ::testing::HasSubstr("train-sft: 2 steps"));
  EXPECT_TRUE(fs::exists(dir_ / "runs/sft/final/config.json"));
  EXPECT_TRUE(fs::exists(dir_ / "runs/sft/final/projector.safetensors"));
  EXPECT_EQ(losses(dir_ / "runs/sft/metrics.jsonl").size(), 2u);

  run_result b =
      run_here("train-sft --data sft_data/sft_samples.jsonl --steps 2 --device cpu -o runs/sft2");
  ASSERT_EQ(b.code, 0) << b.err;

  run_result c = run_here(
      "train-ppo --steps 1 --max-nnz 128 --model-path runs/sft/final --tokenizer-path "
      "runs/sft/final --device cpu --batch-size 2 --max-new-tokens 48");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_THAT(c.out, ::testing::HasSubstr("train-ppo: 1 steps"));
  EXPECT_THAT(slurp(dir_ / "runs/ppo/metrics.jsonl"), ::testing::HasSubstr("\"reward_mean\""));
  EXPECT_TRUE(fs::exists(dir_ / "runs/ppo/final/value_head.safetensors"));

  run_result g = run_here(
      "generate --model runs/ppo/final --samples 2 --max-new-tokens 16 --eval "
      "--device cpu -o gen");
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_TRUE(fs::exists(dir_ / "gen/program_1.cu"));
  EXPECT_THAT(slurp(dir_ / "gen/verdicts.jsonl"), ::testing::HasSubstr("\"reward\""));
}

TEST_F(train_cli, bad_inputs_fail_with_one_line) {
  run_result r = run_here("train-ppo --steps 1 --device cpu");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, ::testing::HasSubstr("--model-path is required"));
  r = run_here("train-sft --data missing.jsonl --steps 1 --device cpu");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, ::testing::HasSubstr("missing.jsonl"));
  // --matrices is --dataset-dir's other name (a folder of .mtx, as in dataset build and serve).
  r = run_here("train-sft --matrices mats --data sft.jsonl --steps 1 --device cpu");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, ::testing::HasSubstr("give one of --data, --dataset-dir and --generate"));
  // quickstart's count of generated matrices is --generate, as in dataset build and the trainers.
  EXPECT_THAT(run_here("quickstart --help").out, ::testing::HasSubstr("--generate"));
}

TEST_F(train_cli, a_run_killed_mid_way_resumes_to_the_same_losses) {
  std::string sft;
  ASSERT_NO_FATAL_FAILURE(tiny_sft("--steps 24 --checkpoint-every 4", sft));
  const std::string common = std::string(SPARSERL_CLI) + " " + sft;
  ASSERT_EQ(std::system((common + path("straight") + " >/dev/null 2>&1").c_str()), 0);

  const pid_t child = start_group(common + path("killed") + " >/dev/null 2>&1");
  ASSERT_GE(child, 0);
  // Kill it hard once a checkpoint past the first one is complete (renamed into place).
  const fs::path mark = dir_ / "killed/checkpoints/step-000000008";
  for (int i = 0; i < 6000 && !fs::exists(mark); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(fs::exists(mark)) << "the run never reached step 8";
  kill_group(child);
  const std::vector<double> before = losses(dir_ / "killed/metrics.jsonl");
  EXPECT_LT(before.size(), 24u) << "the kill came too late to test anything";

  ASSERT_EQ(std::system((common + path("killed") + " --resume >/dev/null 2>&1").c_str()), 0);
  const std::vector<double> straight = losses(dir_ / "straight/metrics.jsonl");
  ASSERT_EQ(straight.size(), 24u);
  EXPECT_EQ(losses(dir_ / "killed/metrics.jsonl"), straight);
}

// --deterministic (only deterministic kernels) is accepted and keeps one seed's run the same. On
// the CPU the kernels are deterministic anyway; what the flag is for, the GPU's atomics, is
// checked on the device (docs/training.md, "Reproducible runs").
TEST_F(train_cli, deterministic_runs_of_one_seed_give_the_same_losses) {
  std::string sft;
  ASSERT_NO_FATAL_FAILURE(tiny_sft("--steps 6 --seed 3 --deterministic", sft));
  for (const char* run_dir : {"first", "second"}) {
    const run_result r = run(sft + path(run_dir));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const std::vector<double> first = losses(dir_ / "first/metrics.jsonl");
  ASSERT_EQ(first.size(), 6u);
  EXPECT_EQ(losses(dir_ / "second/metrics.jsonl"), first);
}

// SIGKILL at seeded random moments (while starting, during a step, in the middle of writing a
// checkpoint), then --resume, again and again: every restart must find the newest complete
// checkpoint loadable, and the run, once let finish, must give the uninterrupted run's losses.
TEST_F(train_cli, kills_at_random_moments_always_leave_a_loadable_checkpoint) {
  std::string sft;
  ASSERT_NO_FATAL_FAILURE(tiny_sft("--steps 16 --checkpoint-every 1 --keep-last 2", sft));
  const std::string common = std::string(SPARSERL_CLI) + " " + sft;
  ASSERT_EQ(std::system((common + path("straight") + " >/dev/null 2>&1").c_str()), 0);

  std::mt19937 rng(20261203);
  std::uniform_int_distribution<int> delay_ms(300, 2500);
  int kills = 0;
  for (int round = 0; round < 8; ++round) {
    const std::string log = path("round-" + std::to_string(round) + ".err");
    const pid_t child =
        start_group(common + path("killed") + (round ? " --resume" : "") + " >/dev/null 2>" + log);
    ASSERT_GE(child, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    const int status = kill_group(child);
    if (WIFSIGNALED(status)) {
      ++kills;
      continue;
    }
    // It ended before the kill: only a finished run may do that, never a refused checkpoint.
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(log);
    break;
  }
  const run_result last = run_here(sft + path("killed") + " --resume");
  ASSERT_EQ(last.code, 0) << last.err;
  EXPECT_GE(kills, 3) << "the runs ended before the kills could test anything";
  EXPECT_EQ(losses(dir_ / "killed/metrics.jsonl"), losses(dir_ / "straight/metrics.jsonl"));
}

// Data parallelism over gloo on loopback, launched torchrun-style: two ranks train on halves of
// every batch and log the single process's losses (up to summation order); the two-rank run,
// stopped half way, resumes in one process.
TEST_F(train_cli, two_ranks_over_gloo_match_one_process_and_resume_in_one) {
  std::string common;
  ASSERT_NO_FATAL_FAILURE(tiny_sft("--steps 6 --checkpoint-every 3 --batch-size 4", common));
  const run_result one = run_here(common + path("one"));
  ASSERT_EQ(one.code, 0) << one.err;

  run_result two = run_two_ranks(common + path("two") + " --stop-after 3");
  if (two.err.find("this build is without") != std::string::npos ||
      two.err.find("no c10d backend") != std::string::npos)
    GTEST_SKIP() << two.err;
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_NE(two.err.find("data parallel: rank 0 of 2 (gloo"), std::string::npos) << two.err;
  EXPECT_EQ(losses(dir_ / "two/metrics.jsonl").size(), 3u) << "rank 0 logs once per step";

  const run_result resumed = run_here(common + path("two") + " --resume");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const std::vector<double> a = losses(dir_ / "one/metrics.jsonl");
  const std::vector<double> b = losses(dir_ / "two/metrics.jsonl");
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(b[i], a[i], 1e-4 * std::abs(a[i])) << i;

  // PPO: each rank generates and judges half of the rollouts; rank 0 logs the whole step's.
  two = run_two_ranks(
      " train-ppo --steps 1 --batch-size 2 --mini-batch 2 --max-new-tokens 16 "
      "--device cpu --no-progress --model-path " +
      path("two/final") + " -o " + path("ppo"));
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_THAT(slurp(dir_ / "ppo/metrics.jsonl"), ::testing::HasSubstr("\"reward_mean\""));
  EXPECT_TRUE(fs::exists(dir_ / "ppo/final/value_head.safetensors"));

  // Group-relative: each rank samples its task's whole group; rank 0 logs both ranks' counts.
  two = run_two_ranks(
      " train-ppo --steps 1 --batch-size 2 --samples-per-task 2 --advantage grpo --mini-batch 2 "
      "--max-new-tokens 16 --device cpu --no-progress --model-path " +
      path("two/final") + " -o " + path("grpo"));
  ASSERT_EQ(two.code, 0) << two.err;
  const nlohmann::json m = nlohmann::json::parse(slurp(dir_ / "grpo/metrics.jsonl"));
  EXPECT_EQ(m.at("rollouts").get<double>(), 4);
  EXPECT_EQ(m.at("groups").get<double>(), 2);
  EXPECT_EQ(m.at("groups_tied").get<double>() + m.at("groups_used").get<double>(), 2);
}

// Group-relative PPO through the CLI: G programs per matrix, and an untrained policy's groups
// (every program missing, all scored -1) are left out of the update and counted.
TEST_F(train_cli, group_ppo_samples_g_per_task_and_leaves_tied_groups_out) {
  std::string sft;
  ASSERT_NO_FATAL_FAILURE(tiny_sft("--steps 2", sft));
  const run_result s = run_here(sft + path("sft"));
  ASSERT_EQ(s.code, 0) << s.err;
  const std::string ppo =
      "train-ppo --steps 1 --batch-size 2 --mini-batch 4 --max-new-tokens 16 "
      "--device cpu --no-progress --model-path " +
      path("sft/final");
  const run_result r = run_here(ppo + " --samples-per-task 4 --advantage rloo -o " + path("ppo"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr("2 per step x 4 samples, advantage rloo"));
  const nlohmann::json m = nlohmann::json::parse(slurp(dir_ / "ppo/metrics.jsonl"));
  EXPECT_EQ(m.at("rollouts").get<double>(), 8);
  EXPECT_EQ(m.at("groups").get<double>(), 2);
  ASSERT_EQ(m.at("reward_std").get<double>(), 0) << "some program scored: not all groups tie";
  EXPECT_EQ(m.at("groups_tied").get<double>(), 2);
  EXPECT_EQ(m.at("groups_used").get<double>(), 0);
  EXPECT_EQ(m.at("rollouts_used").get<double>(), 0);
  EXPECT_THAT(r.out, ::testing::HasSubstr("tied groups left out 2/2"));

  run_result bad = run_here(ppo + " --samples-per-task 1 --advantage grpo -o " + path("bad"));
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, ::testing::HasSubstr("needs --samples-per-task >= 2"));
  bad = run_here(ppo + " --advantage vtrace -o " + path("bad"));
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, ::testing::HasSubstr("--advantage vtrace: expected rloo, grpo or gae"));
  bad = run_here(ppo + " --samples-per-task 2 --header-temperature 1 --header-top-p 1.5 -o " +
                 path("bad-header"));
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, ::testing::HasSubstr("train-ppo: --header-top-p 1.5"));
  EXPECT_FALSE(fs::exists(dir_ / "bad-header")) << "a refused run writes nothing";

  // The header drawn on its own: the same step's layout and counts.
  const run_result h =
      run_here(ppo + " --samples-per-task 4 --header-temperature 1.5 -o " + path("ppo-header"));
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_THAT(h.err, ::testing::HasSubstr("header temperature 1.5 top-p 1\n"));
  const nlohmann::json hm = nlohmann::json::parse(slurp(dir_ / "ppo-header/metrics.jsonl"));
  EXPECT_EQ(hm.at("rollouts").get<double>(), 8);
  EXPECT_EQ(hm.at("groups").get<double>(), 2);
}

// evaluate-policy on three small matrices on the CPU: counts agree with the verdicts, and the
// speed-ups (which need the GPU's timing) are null, shown as "-".
TEST_F(train_cli, evaluate_policy_reports_every_matrix_with_counts_and_no_cpu_speedups) {
  std::string sft;
  ASSERT_NO_FATAL_FAILURE(tiny_sft("--steps 2", sft));
  const run_result s = run_here(sft + path("sft"));
  ASSERT_EQ(s.code, 0) << s.err;
  fs::create_directories(dir_ / "mats");
  ASSERT_EQ(run("matrix gen stencil2d --rows 64 -o " + path("mats/a.mtx")).code, 0);
  ASSERT_EQ(run("matrix gen banded --rows 48 --seed 2 -o " + path("mats/b.mtx")).code, 0);
  ASSERT_EQ(run("matrix gen random --rows 40 --density 0.1 -o " + path("mats/c.mtx")).code, 0);
  const std::string common = "evaluate-policy --model " + path("sft/final") +
                             " --samples 2 --max-new-tokens 16 --device cpu ";
  const run_result r = run(common + "--matrices " + path("mats") + " -o " + path("ev"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("3 matrices x 2 samples (cpu)"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("greedy -, best of K -, heuristic -, tuned best -"));
  const nlohmann::json j = nlohmann::json::parse(slurp(dir_ / "ev/evaluate_policy.json"));
  EXPECT_EQ(j.at("executor"), "cpu");
  const nlohmann::json& sum = j.at("summary");
  EXPECT_EQ(sum.at("matrices").get<int>(), 3);
  EXPECT_EQ(sum.at("samples").get<int>(), 6);
  for (const char* g : {"geomean_speedup_greedy", "geomean_speedup_best_of_k",
                        "geomean_speedup_heuristic", "geomean_speedup_tuned"})
    EXPECT_TRUE(sum.at(g).is_null()) << g;
  ASSERT_EQ(j.at("matrices").size(), 3u);
  EXPECT_EQ(j["matrices"][0]["matrix"], "a.mtx");
  EXPECT_EQ(j["matrices"][2]["matrix"], "c.mtx");
  int compiled = 0, correct = 0;
  for (const nlohmann::json& m : j.at("matrices")) {
    ASSERT_EQ(m.at("sample_verdicts").size(), 2u);
    int mc = 0, mk = 0;
    for (const nlohmann::json& v : m.at("sample_verdicts")) {
      mc += v.at("compiled").get<bool>();
      mk += v.at("correct").get<bool>();
    }
    EXPECT_EQ(m.at("compiled").get<int>(), mc);
    EXPECT_EQ(m.at("correct").get<int>(), mk);
    compiled += mc;
    correct += mk;
    EXPECT_TRUE(m.at("speedup_greedy").is_null());
    EXPECT_TRUE(m.at("speedup_tuned").is_null());
    // The greedy program is kept as text (the policy is untrained: whatever it wrote).
    EXPECT_TRUE(m.at("greedy_program").is_string());
    // The heuristic's pick is judged too, and is correct on the emulator.
    EXPECT_TRUE(m.at("heuristic_correct").get<bool>()) << m.at("heuristic_config");
    EXPECT_FALSE(m.at("heuristic_config").get<std::string>().empty());
  }
  EXPECT_EQ(sum.at("compiled").get<int>(), compiled);
  EXPECT_EQ(sum.at("correct").get<int>(), correct);
  // 12 programs (3 greedy, 6 samples, 3 heuristic picks): each matrix's first is always judged.
  EXPECT_LE(sum.at("verdicts_shared").get<int>(), 9);
  if (std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0) {
    EXPECT_EQ(slurp(dir_ / "ev/evaluate_policy.png").substr(1, 3), "PNG");
  }

  // --baselines: a.mtx's tuned column comes from the earlier file (edited, so reuse shows; the
  // emulator times nothing, so there is no tuned program to time again), b.mtx is not in it and
  // is judged afresh; the heuristic's pick is judged in this run for every matrix, so c.mtx's
  // stale heuristic program in the file is replaced by today's.
  nlohmann::json earlier = j;
  nlohmann::json kept = nlohmann::json::array();
  for (nlohmann::json m : earlier["matrices"]) {
    if (m["matrix"] == "b.mtx") continue;
    if (m["matrix"] == "a.mtx") m["speedup_tuned"] = 1.5;
    if (m["matrix"] == "c.mtx") {
      m["heuristic_config"] = "an older heuristic's pick";
      m["speedup_tuned"] = 1.25;
    }
    kept.push_back(m);
  }
  earlier["matrices"] = kept;
  {
    std::ofstream f(dir_ / "earlier.json");
    f << earlier.dump();
  }
  const run_result files =
      run(common + "--matrices " + path("mats/b.mtx") + " " + path("mats/a.mtx") + " " +
          path("mats/c.mtx") + " --baselines " + path("earlier.json") + " -o " + path("ev2"));
  ASSERT_EQ(files.code, 0) << files.err;
  const nlohmann::json two = nlohmann::json::parse(slurp(dir_ / "ev2/evaluate_policy.json"));
  ASSERT_EQ(two.at("matrices").size(), 3u);
  EXPECT_EQ(two["matrices"][0]["matrix"], "b.mtx");
  EXPECT_FALSE(two["matrices"][0]["baselines_reused"].get<bool>());
  EXPECT_EQ(two["matrices"][0]["heuristic_config"], j["matrices"][1]["heuristic_config"]);
  EXPECT_TRUE(two["matrices"][1]["baselines_reused"].get<bool>());
  EXPECT_FALSE(two["matrices"][1]["tuned_retimed"].get<bool>());
  EXPECT_EQ(two["matrices"][1]["speedup_tuned"], 1.5);
  EXPECT_EQ(two["matrices"][2]["matrix"], "c.mtx");
  EXPECT_TRUE(two["matrices"][2]["baselines_reused"].get<bool>());
  EXPECT_TRUE(two["matrices"][2]["heuristic_correct"].get<bool>());
  EXPECT_EQ(two["matrices"][2]["heuristic_config"], j["matrices"][2]["heuristic_config"]);
  EXPECT_EQ(two["matrices"][2]["speedup_tuned"], 1.25);
  EXPECT_EQ(two["summary"]["baselines_reused"].get<int>(), 2);
  // The training commands' spellings work too (--model-path, --output-dir).
  const run_result spelled = run("evaluate-policy --model-path " + path("sft/final") +
                                 " --samples 1 --max-new-tokens 8 --device cpu --matrices " +
                                 path("mats/a.mtx") + " --output-dir " + path("ev3"));
  ASSERT_EQ(spelled.code, 0) << spelled.err;
  EXPECT_TRUE(fs::exists(dir_ / "ev3/evaluate_policy.json"));
  expect_one_line_error(
      common + "--matrices " + path("mats") + " --baselines " + path("mats/a.mtx"),
      "a.mtx: not JSON");
  expect_one_line_error(common + "--matrices " + path("nowhere"), "nowhere: no such file");
}

TEST_F(train_cli, quickstart_completes_and_judges_a_held_out_kernel) {
  run_result r =
      run("quickstart --device cpu --matrices 8 --held-out 3 --pretrain-steps 3 --sft-steps 4 "
          "--ppo-steps 1 --max-new-tokens 64 --no-progress -o " +
          path("qs"));
  ASSERT_EQ(r.code, 0) << r.err;
  // --no-progress, as in the other commands: no bar from labelling or any training stage.
  EXPECT_THAT(r.err, ::testing::Not(::testing::HasSubstr("it/s")));
  EXPECT_THAT(r.err, ::testing::Not(::testing::HasSubstr("s/it")));
  EXPECT_THAT(r.out, ::testing::HasSubstr("[6/8] held-out matrices after SFT"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("[8/8] held-out matrices after PPO"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("verdict: "));
  // Both reports judge the same held-out matrices, and their counts agree with their verdicts.
  const nlohmann::json report = nlohmann::json::parse(slurp(dir_ / "qs/held_out.json"));
  for (const char* when : {"after_sft", "after_ppo"}) {
    const nlohmann::json& h = report.at(when);
    ASSERT_EQ(h.at("matrices").get<int>(), 3) << when;  // --held-out
    ASSERT_EQ(h.at("results").size(), h.at("matrices").get<size_t>()) << when;
    int compiled = 0, correct = 0;
    for (const auto& v : h.at("results")) {
      compiled += v.at("compiled").get<bool>();
      correct += v.at("correct").get<bool>();
    }
    EXPECT_EQ(h.at("compiled").get<int>(), compiled) << when;
    EXPECT_EQ(h.at("correct").get<int>(), correct) << when;
  }
  EXPECT_EQ(report["after_sft"]["results"][0]["matrix"],
            report["after_ppo"]["results"][0]["matrix"]);
  EXPECT_TRUE(fs::exists(dir_ / "qs/final/config.json"));
  EXPECT_TRUE(fs::exists(dir_ / "qs/held_out.cu"));
  EXPECT_TRUE(fs::exists(dir_ / "qs/ppo/metrics.jsonl"));
  // The held-out matrices are none of the training ones (another seed; structures compared).
  std::set<std::string> train, val;
  std::ifstream sft(dir_ / "qs/sft.jsonl");
  for (std::string line; std::getline(sft, line);) {
    const nlohmann::json s = nlohmann::json::parse(line);
    (s.at("split") == "val" ? val : train).insert(s.at("rows").dump() + s.at("cols").dump());
  }
  EXPECT_EQ(train.size(), 8u);
  EXPECT_EQ(val.size(), 3u);
  for (const std::string& pattern : val) EXPECT_EQ(train.count(pattern), 0u);
}

}  // namespace
}  // namespace sparserl::testing
