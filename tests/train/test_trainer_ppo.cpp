// PPO end to end on a toy set: a tiny policy is taught by SFT to write, for each matrix, either a
// correct CSR kernel or one that scales its output by 0.5 (wrong), half and half; PPO with the
// real harness (NVRTC + the sandboxed CPU emulator) as reward must move it to the correct one.
// A random policy writes no parsable program at all (reward -1); the SFT policy starts near
// (1 + 0) / 2; the assertion needs a clear rise above that.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <iostream>
#include <map>

#include "eval/cpu_runner.h"
#include "kernel/abi.h"
#include "sparse/error.h"
#include "sparse/generators.h"
#include "train/jsonl_file.h"
#include "train/lm_examples.h"
#include "train/prompt.h"
#include "train/trainer_lm.h"
#include "train/trainer_ppo.h"
#include "train_testing.h"

namespace sparserl::train {
namespace {

std::string toy_program(bool correct) {
  return "FORMAT: CSR\nLAUNCH: block=64 rows_per_block=64\n" +
         entry_signature(sparse_op::spmv, format_kind::csr, "spmv_csr") +
         " {\n  int row = blockIdx.x * blockDim.x + threadIdx.x;\n  if (row >= rows) return;\n"
         "  float sum = 0.0f;\n  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i)\n"
         "    sum += values[i] * x[col_idx[i]];\n" +
         std::string(correct ? "  y[row] = sum;\n" : "  y[row] = 0.5f * sum;\n") + "}\n";
}

std::vector<csr_matrix> toy_matrices() {
  std::vector<csr_matrix> out;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    generator_spec s;
    s.family = seed % 2 ? "stencil2d" : "banded";
    s.rows = 64 + 16 * static_cast<int32_t>(seed);
    s.seed = seed;
    out.push_back(generate_matrix(s));
  }
  return out;
}

// A tiny policy taught by SFT to write the correct and the wrong program for each toy matrix,
// half and half, and the PPO tasks of those matrices.
policy sft_toy_policy(const testing::temp_dir& dir, std::vector<ppo_task>& tasks) {
  std::vector<csr_matrix> matrices = toy_matrices();
  std::vector<std::string> texts = {toy_program(true), toy_program(false)};
  for (const auto& m : matrices) texts.push_back(task_prompt(sparse_op::spmv, 1, m));
  testing::train_test_tokenizer(texts, dir.sub("tok"), 400);
  torch::manual_seed(1);
  policy p = testing::tiny_policy(dir.sub("tok"), 7, true, 8);

  lm_dataset sft;
  for (size_t i = 0; i < matrices.size(); ++i) {
    sft.prefixes.push_back(p.encode(matrices[i]));
    for (bool correct : {true, false})
      sft.train.push_back(make_sft_example(p, task_prompt(sparse_op::spmv, 1, matrices[i]),
                                           toy_program(correct), static_cast<int64_t>(i)));
  }
  lm_train_options so;
  so.run.run_dir = dir.sub("sft");
  so.run.steps = 150;
  so.run.progress = false;
  so.optim.lr = 3e-3;
  so.batch_size = 4;
  lm_train_result sr = train_lm(p, sft, so);
  EXPECT_LT(sr.last_train_loss, 0.1) << "SFT did not converge";
  for (size_t i = 0; i < matrices.size(); ++i)
    tasks.push_back(make_ppo_task(p, "toy" + std::to_string(i), matrices[i], sparse_op::spmv, 1));
  return p;
}

double mean_reward(const ppo_result& r, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += r.steps[i].reward_mean;
  return s / static_cast<double>(to - from);
}

// The options the toy runs share: a seeded run of `steps`, 2 epochs over mini-batches of 4.
ppo_options toy_options(const std::string& run_dir, int64_t steps, double lr, int64_t batch_size) {
  ppo_options o;
  o.run.run_dir = run_dir;
  o.run.steps = steps;
  o.run.progress = false;
  o.run.seed = 3;
  o.optim.lr = lr;
  o.batch_size = batch_size;
  o.mini_batch = 4;
  o.ppo_epochs = 2;
  o.reward_threads = 2;
  return o;
}

TEST(trainer_ppo, ppo_raises_the_mean_reward_of_the_harness) {
  testing::temp_dir dir("ppo_toy");
  std::vector<ppo_task> tasks;
  policy p = sft_toy_policy(dir, tasks);
  ASSERT_FALSE(::testing::Test::HasFailure());

  cpu_runner runner;
  evaluator judge(runner);
  ppo_options o = toy_options(dir.sub("ppo"), 12, 3e-5, 8);
  o.max_new_tokens = 220;
  // A policy this small never recovers from an off-path token, so rollouts sample at T = 0.5
  // (both programs still get drawn: they share most of the text and SFT saw each half the time).
  o.temperature = 0.5;
  o.kl_coef = 0.01;
  o.lam = 1.0;  // one score after ~200 tokens: 0.95^200 would leave the early tokens no signal
  ppo_result r = train_ppo(p, tasks, judge, o);
  ASSERT_EQ(r.steps.size(), 12u);
  for (const ppo_step_stats& st : r.steps)  // the trend, for the log
    std::cout << "reward " << st.reward_mean << " compiled " << st.compile_rate << " correct "
              << st.correct_rate << " kl " << st.kl << "\n";
  const double early = mean_reward(r, 0, 3), late = mean_reward(r, 9, 12);
  EXPECT_GT(r.steps[0].extract_rate, 0.5) << "SFT did not teach the program format";
  EXPECT_GT(late, early + 0.25) << early << " -> " << late;
  EXPECT_GT(late, 0.8);
  EXPECT_GT(r.steps.back().correct_rate, r.steps.front().correct_rate);
}

// The same toy with group-relative advantages and no critic: 2 matrices x 4 programs a step,
// RLOO's leave-one-out baseline; groups where all four programs agree are left out.
TEST(trainer_ppo, rloo_groups_raise_the_mean_reward_without_a_value_head) {
  testing::temp_dir dir("ppo_rloo");
  std::vector<ppo_task> tasks;
  policy p = sft_toy_policy(dir, tasks);
  ASSERT_FALSE(::testing::Test::HasFailure());
  cpu_runner runner;
  evaluator judge(runner);
  ppo_options o = toy_options(dir.sub("ppo"), 10, 3e-5, 2);
  o.samples_per_task = 4;
  o.advantage = "rloo";
  o.max_new_tokens = 220;
  o.temperature = 0.5;
  o.kl_coef = 0.01;
  ppo_result r = train_ppo(p, tasks, judge, o);
  ASSERT_EQ(r.steps.size(), 10u);
  double tied = 0;
  for (const ppo_step_stats& st : r.steps) {
    std::cout << "reward " << st.reward_mean << " correct " << st.correct_rate << " groups tied "
              << st.groups_tied << "/" << st.groups << " used " << st.rollouts_used << "\n";
    EXPECT_EQ(st.groups, 2);
    EXPECT_EQ(st.value_loss, 0);  // no critic
    EXPECT_EQ(st.rollouts_used, 4 * (st.groups - st.groups_tied));
    tied += st.groups_tied;
  }
  const double early = mean_reward(r, 0, 3), late = mean_reward(r, 7, 10);
  EXPECT_GT(late, early + 0.25) << early << " -> " << late;
  EXPECT_GT(late, 0.8);
  EXPECT_GT(tied, 0) << "a policy that converges ends in groups that all agree";

  // RUN/rollouts.jsonl: every rollout of every step, as many used as the step's statistics say,
  // and in a group that entered the update a correct program's advantage above a wrong one's.
  std::map<int64_t, int64_t> lines_per_step, used_per_step;
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<bool, double>>> groups;
  read_jsonl(dir.sub("ppo") + "/rollouts.jsonl", [&](const nlohmann::json& j, int64_t) {
    const int64_t step = j["step"];
    ++lines_per_step[step];
    if (j["used"].get<bool>()) {
      ++used_per_step[step];
      groups[{step, j["group"].get<int64_t>()}].push_back(
          {j["correct"].get<bool>(), j["advantage"].get<double>()});
    }
  });
  ASSERT_EQ(lines_per_step.size(), 10u);
  for (int64_t step = 1; step <= 10; ++step) {
    EXPECT_EQ(lines_per_step[step], 8) << "step " << step;
    EXPECT_EQ(used_per_step[step], r.steps[static_cast<size_t>(step - 1)].rollouts_used);
  }
  int compared = 0;
  for (const auto& [key, rows] : groups)
    for (const auto& [correct_i, adv_i] : rows)
      for (const auto& [correct_j, adv_j] : rows)
        if (correct_i && !correct_j) {
          EXPECT_GT(adv_i, adv_j) << "step " << key.first << " group " << key.second;
          ++compared;
        }
  EXPECT_GT(compared, 0);
}

// The SFT anchor (PPO-ptx): a policy from scratch writes no program (every reward -1, but GAE
// still updates every step); with the anchor, each update also descends the SFT loss of the toy
// programs, so that loss falls over 8 PPO steps, and the metrics log it; without it, it does
// not fall and the metrics carry no sft_loss.
TEST(trainer_ppo, the_sft_anchor_joins_every_update) {
  testing::temp_dir dir("ppo_anchor");
  std::vector<csr_matrix> matrices = toy_matrices();
  std::vector<std::string> texts = {toy_program(true)};
  for (const auto& m : matrices) texts.push_back(task_prompt(sparse_op::spmv, 1, m));
  testing::train_test_tokenizer(texts, dir.sub("tok"), 400);
  cpu_runner runner;
  evaluator judge(runner);
  auto run = [&](bool anchored, const std::string& name) {
    torch::manual_seed(1);
    policy p = testing::tiny_policy(dir.sub("tok"), 7, true, 8);
    lm_dataset anchor;
    std::vector<ppo_task> tasks;
    for (size_t i = 0; i < matrices.size(); ++i) {
      anchor.prefixes.push_back(p.encode(matrices[i]));
      anchor.train.push_back(make_sft_example(p, task_prompt(sparse_op::spmv, 1, matrices[i]),
                                              toy_program(true), static_cast<int64_t>(i)));
      tasks.push_back(make_ppo_task(p, "toy" + std::to_string(i), matrices[i], sparse_op::spmv, 1));
    }
    const double before = evaluate_lm(p, anchor, anchor.train, 4, 1024);
    ppo_options o = toy_options(dir.sub(name), 8, 3e-3, 4);
    o.max_new_tokens = 8;  // nothing to judge: only the update matters here
    o.sft_coef = anchored ? 1.0 : 0.0;
    o.sft_batch = 4;
    const ppo_result r = train_ppo(p, tasks, judge, o, anchored ? &anchor : nullptr);
    EXPECT_EQ(r.steps.size(), 8u);
    for (const ppo_step_stats& st : r.steps) {
      EXPECT_EQ(st.has_sft_loss, anchored);
      EXPECT_EQ(to_json(st).contains("sft_loss"), anchored);
      if (anchored) {
        EXPECT_GT(st.sft_loss, 0);
      }
    }
    return std::make_pair(before, evaluate_lm(p, anchor, anchor.train, 4, 1024));
  };
  const auto [anchored_before, anchored_after] = run(true, "with");
  const auto [free_before, free_after] = run(false, "without");
  EXPECT_DOUBLE_EQ(anchored_before, free_before);  // the same policy at the start
  std::cout << "anchor loss with " << anchored_before << " -> " << anchored_after << ", without "
            << free_before << " -> " << free_after << "\n";
  EXPECT_LT(anchored_after, 0.8 * anchored_before);
  EXPECT_GT(free_after, 0.95 * free_before);
}

TEST(trainer_ppo, the_sft_anchor_and_its_coefficient_come_together) {
  testing::temp_dir dir("ppo_anchor_args");
  std::vector<csr_matrix> matrices = toy_matrices();
  testing::train_test_tokenizer({toy_program(true)}, dir.sub("tok"), 300);
  policy p = testing::tiny_policy(dir.sub("tok"), 7, true, 8);
  std::vector<ppo_task> tasks = {make_ppo_task(p, "toy", matrices[0], sparse_op::spmv, 1)};
  lm_dataset anchor;
  anchor.prefixes.push_back(p.encode(matrices[0]));
  anchor.train.push_back(make_sft_example(p, "prompt", toy_program(true), 0));
  cpu_runner runner;
  evaluator judge(runner);
  ppo_options o = toy_options(dir.sub("ppo"), 1, 1e-5, 1);
  auto message = [&](const lm_dataset* a) {
    try {
      train_ppo(p, tasks, judge, o, a);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  o.sft_coef = 0.5;
  EXPECT_EQ(message(nullptr),
            "train-ppo: --sft-coef needs --sft-anchor (the SFT data to anchor to)");
  o.sft_coef = 0;
  EXPECT_EQ(message(&anchor), "train-ppo: --sft-anchor needs --sft-coef > 0");
  lm_dataset empty;
  o.sft_coef = 0.5;
  EXPECT_EQ(message(&empty), "train-ppo: the SFT anchor (--sft-anchor) has no training examples");
}

}  // namespace
}  // namespace sparserl::train
