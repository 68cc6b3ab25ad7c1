// SFT and pre-training on real data paths: expert programs from the kernel library for generated
// matrices, a BPE tokenizer trained on them, a tiny Qwen3 from scratch.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <fstream>

#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/features.h"
#include "sparse/generators.h"
#include "train/lm_examples.h"
#include "train/prompt.h"
#include "train/trainer_lm.h"
#include "train_testing.h"

namespace sparserl::train {
namespace {

struct sft_fixture {
  std::vector<csr_matrix> matrices;
  std::vector<std::string> programs;
};

sft_fixture make_fixture() {
  sft_fixture f;
  int seed = 1;
  for (const std::string family : {"stencil2d", "banded", "random", "block_diagonal", "stencil2d",
                                   "banded", "random", "rmat"}) {
    generator_spec s;
    s.family = family;
    s.rows = 200 + 37 * seed;
    s.seed = static_cast<uint64_t>(seed++);
    s.density = 0.02;
    csr_matrix m = generate_matrix(s);
    const expert_config c = pick_heuristic(sparse_op::spmv, compute_features(m), 1);
    f.programs.push_back(emit_program(c).to_text());
    f.matrices.push_back(std::move(m));
  }
  return f;
}

lm_dataset sft_dataset(const policy& p, const sft_fixture& f) {
  lm_dataset d;
  for (size_t i = 0; i < f.matrices.size(); ++i) {
    d.prefixes.push_back(p.encode(f.matrices[i]));
    lm_example e = make_sft_example(p, task_prompt(sparse_op::spmv, 1, f.matrices[i]),
                                    f.programs[i], static_cast<int64_t>(i));
    (i % 4 == 3 ? d.val : d.train).push_back(std::move(e));  // split by matrix
  }
  return d;
}

std::vector<std::string> tokenizer_texts(const sft_fixture& f) {
  std::vector<std::string> texts = f.programs;
  for (const auto& m : f.matrices) texts.push_back(task_prompt(sparse_op::spmv, 1, m));
  return texts;
}

lm_train_options quick_options(const std::string& run_dir, int64_t steps) {
  lm_train_options o;
  o.run.run_dir = run_dir;
  o.run.steps = steps;
  o.run.seed = 5;
  o.run.progress = false;
  o.optim.lr = 3e-3;
  o.optim.warmup_steps = 2;
  o.batch_size = 2;
  o.max_len = 768;
  return o;
}

std::vector<double> logged_losses(const std::string& run_dir) {
  std::ifstream in(run_dir + "/metrics.jsonl");
  std::vector<double> out;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains("loss")) out.push_back(j["loss"].get<double>());
  }
  return out;
}

TEST(trainer_lm, sft_lowers_the_validation_loss_of_held_out_matrices) {
  testing::temp_dir dir("sft_val");
  const sft_fixture f = make_fixture();
  testing::train_test_tokenizer(tokenizer_texts(f), dir.sub("tok"));
  policy p = testing::tiny_policy(dir.sub("tok"), 1, false);
  const lm_dataset data = sft_dataset(p, f);
  ASSERT_EQ(data.val.size(), 2u);
  lm_train_result r = train_lm(p, data, quick_options(dir.sub("run"), 40));
  EXPECT_EQ(r.steps_done, 40);
  EXPECT_GT(r.first_val_loss, 0);
  // Random init starts near log(vocab) ~ 6.4; the shared structure of the programs must carry over.
  EXPECT_LT(r.last_val_loss, 0.8 * r.first_val_loss)
      << r.first_val_loss << " -> " << r.last_val_loss;
  EXPECT_LT(r.last_train_loss, r.first_train_loss);
}

TEST(trainer_lm, a_resumed_run_repeats_the_uninterrupted_losses_bit_for_bit) {
  testing::temp_dir dir("sft_resume");
  const sft_fixture f = make_fixture();
  testing::train_test_tokenizer(tokenizer_texts(f), dir.sub("tok"));

  torch::manual_seed(3);
  policy straight = testing::tiny_policy(dir.sub("tok"), 2, false);
  lm_train_options o = quick_options(dir.sub("straight"), 6);
  o.run.checkpoint_every = 2;
  train_lm(straight, sft_dataset(straight, f), o);

  torch::manual_seed(3);
  policy first = testing::tiny_policy(dir.sub("tok"), 2, false);
  o.run.run_dir = dir.sub("interrupted");
  o.run.stop_after = 3;  // stops after step 3; its last checkpoint is step 2
  train_lm(first, sft_dataset(first, f), o);

  policy second = testing::tiny_policy(dir.sub("tok"), 99, false);  // other init: all restored
  o.run.stop_after = -1;
  o.run.resume = true;
  lm_train_result r = train_lm(second, sft_dataset(second, f), o);
  EXPECT_EQ(r.steps_done, 4);  // steps 3..6
  EXPECT_EQ(logged_losses(dir.sub("interrupted")), logged_losses(dir.sub("straight")));
  EXPECT_EQ(logged_losses(dir.sub("straight")).size(), 6u);
}

TEST(trainer_lm, pretraining_blocks_cover_the_corpus_and_train) {
  testing::temp_dir dir("pretrain");
  const sft_fixture f = make_fixture();
  testing::train_test_tokenizer(tokenizer_texts(f), dir.sub("tok"));
  policy p = testing::tiny_policy(dir.sub("tok"), 4, false);
  lm_dataset d;
  d.train = make_pretrain_blocks(p, f.programs, 128);
  size_t tokens = 0;
  for (const auto& e : d.train) tokens += e.ids.size();
  size_t expected = 0;
  for (const auto& prog : f.programs) expected += p.encode_text(prog).size() + 1;
  EXPECT_EQ(tokens, expected);
  const int64_t steps = 20;
  lm_train_options o = quick_options(dir.sub("run"), steps);
  o.kind = "pretrain";
  lm_train_result r = train_lm(p, d, o);
  EXPECT_LT(r.last_train_loss, r.first_train_loss - 1.0);
  // Without validation data no line carries a val_loss (no placeholder for the plots to draw).
  std::ifstream in(dir.sub("run") + "/metrics.jsonl");
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines)
    EXPECT_FALSE(nlohmann::json::parse(line).contains("val_loss")) << line;
  EXPECT_EQ(lines, steps);
}

}  // namespace
}  // namespace sparserl::train
