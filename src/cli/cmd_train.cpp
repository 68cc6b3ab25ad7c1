// sparserl pretrain | train-sft | train-ppo: the three stages of the SparseRL pipeline
// (train/trainer_lm.h, train/trainer_ppo.h). Each writes RUN/metrics.jsonl, RUN/checkpoints/ and
// the final policy to RUN/final (an HF directory plus the matrix projector and value head).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/runner_choice.h"
#include "cli/train_setup.h"
#include "sparse/error.h"
#include "train/cuda_corpus.h"
#include "train/lm_examples.h"
#include "train/parallel_for.h"
#include "train/reward_matrices.h"
#include "train/trainer_ppo.h"

namespace sparserl::cli {
namespace {

struct lm_args {
  model_args model;
  data_args data;
  train::lm_train_options train;
  std::string corpus;  // pretrain
  int64_t corpus_bytes = int64_t{4} << 20;
};

void print_lm_result(const char* what, const train::lm_train_result& r, const std::string& out) {
  std::printf("%s: %lld steps, train loss %.4f -> %.4f", what, static_cast<long long>(r.steps_done),
              r.first_train_loss, r.last_train_loss);
  if (r.last_val_loss >= 0)
    std::printf(", val loss %.4f -> %.4f", r.first_val_loss, r.last_val_loss);
  std::printf("; policy saved to %s\n", out.c_str());
}

void finish_lm(train::policy& p, const train::lm_dataset& d, lm_args& a, const char* what) {
  const train::lm_train_result r = train::train_lm(p, d, a.train);
  const train::data_parallel* dp = a.train.run.parallel;
  if (dp && !dp->is_main()) return;  // rank 0 writes the run's files
  const std::string final_dir = a.train.run.run_dir + "/final";
  p.save(final_dir);
  print_lm_result(what, r, final_dir);
}

void run_sft(lm_args& a) {
  prepare_run_dir(a.train.run.run_dir);
  const std::unique_ptr<train::data_parallel> dp = join_data_parallel(a.model);
  a.train.run.parallel = dp.get();
  std::unique_ptr<program_runner> runner;
  if (a.data.data.empty()) runner = make_runner(a.model.device, a.data.workers);
  const std::vector<train::sft_sample> samples = load_samples(a.data, runner.get(), 0);
  train::policy p = make_policy(a.model, tokenizer_texts(samples), a.train.run.run_dir, false);
  const train::lm_dataset d = sft_lm_dataset(p, samples);
  std::fprintf(stderr, "train-sft: %zu train and %zu val samples\n", d.train.size(), d.val.size());
  a.train.kind = "sft";
  a.train.run.seed = a.model.seed;
  finish_lm(p, d, a, "train-sft");
}

void run_pretrain(lm_args& a) {
  prepare_run_dir(a.train.run.run_dir);
  const std::unique_ptr<train::data_parallel> dp = join_data_parallel(a.model);
  a.train.run.parallel = dp.get();
  std::vector<train::corpus_document> docs;
  if (!a.corpus.empty()) {
    docs = train::read_corpus_jsonl(a.corpus);
  } else {
    train::corpus_options o;
    o.max_bytes = a.corpus_bytes;
    docs = train::build_cuda_corpus(o);
  }
  std::vector<std::string> train_text, val_text;
  for (const auto& d : docs) (d.split == "val" ? val_text : train_text).push_back(d.text);
  train::policy p = make_policy(a.model, train_text, a.train.run.run_dir, false);
  train::lm_dataset d;
  d.train = train::make_pretrain_blocks(p, train_text, a.train.max_len);
  d.val = train::make_pretrain_blocks(p, val_text, a.train.max_len);
  std::fprintf(stderr, "pretrain: %zu documents, %zu train and %zu val blocks of %lld tokens\n",
               docs.size(), d.train.size(), d.val.size(), static_cast<long long>(a.train.max_len));
  a.train.kind = "pretrain";
  a.train.run.seed = a.model.seed;
  finish_lm(p, d, a, "pretrain");
}

void add_lm_command(CLI::App& app, const char* name, const char* help, bool sft) {
  auto a = std::make_shared<lm_args>();
  a->train.run.run_dir = sft ? "runs/sft" : "runs/pretrain";
  a->train.run.steps = sft ? 200 : 500;
  a->train.optim.lr = 1e-3;
  a->train.optim.warmup_steps = 10;
  if (!sft) a->train.max_len = 256;
  CLI::App* cmd = app.add_subcommand(name, help);
  // The seed (Python SparseRL) spells the stage train_sft; scripts written for it keep working.
  if (sft) cmd->alias("train_sft");
  add_model_options(cmd, a->model, true);
  add_run_options(cmd, a->train.run, a->train.optim);
  if (sft) {
    add_data_options(cmd, a->data);
  } else {
    cmd->add_option("--corpus", a->corpus,
                    "Corpus JSONL (`sparserl dataset corpus`); default: built now");
    cmd->add_option("--corpus-bytes", a->corpus_bytes, "Default corpus: its size cap")
        ->capture_default_str();
  }
  cmd->add_option("--batch-size", a->train.batch_size, "Sequences per micro-batch")
      ->capture_default_str();
  cmd->add_option("--grad-accum", a->train.grad_accum, "Micro-batches per step")
      ->capture_default_str();
  cmd->add_option(sft ? "--max-len" : "--seq-len", a->train.max_len, "Tokens per sequence")
      ->capture_default_str();
  cmd->add_option("--eval-every", a->train.eval_every,
                  "Validation loss every N steps (0: at the end)")
      ->capture_default_str();
  cmd->callback([a, sft] { sft ? run_sft(*a) : run_pretrain(*a); });
}

struct ppo_args {
  model_args model;
  data_args data;
  train::ppo_options ppo;
  double timeout_s = 5;
  int64_t min_nnz = -1;    // -1: train::reward_min_nnz's default for the runner
  std::string sft_anchor;  // SFT JSONL of the anchor term ("": none)
};

void run_ppo(ppo_args& a) {
  if (a.model.model_path.empty())
    throw error(
        "train-ppo: --model-path is required (an HF Qwen3 directory or a train-sft output)");
  train::check_sft_anchor(!a.sft_anchor.empty(), a.ppo);
  train::check_ppo_sampling(a.ppo);
  prepare_run_dir(a.ppo.run.run_dir);
  const std::unique_ptr<train::data_parallel> dp = join_data_parallel(a.model);
  a.ppo.run.parallel = dp.get();
  // Each rank judges its rollouts with its own worker set, on its own GPU.
  std::unique_ptr<program_runner> runner =
      make_runner(a.model.device, a.data.workers, a.model.cuda_index);
  const int64_t min_nnz = train::reward_min_nnz(a.min_nnz, runner->name());
  const train::reward_matrix_split reward_matrices =
      train::keep_reward_matrices(load_samples(a.data, runner.get(), 8), min_nnz);
  const std::vector<train::sft_sample>& samples = reward_matrices.kept;
  if (reward_matrices.too_small > 0)
    std::fprintf(stderr, "train-ppo: %lld matrices under --min-nnz %lld left out\n",
                 static_cast<long long>(reward_matrices.too_small),
                 static_cast<long long>(min_nnz));
  if (samples.empty())
    throw error("train-ppo: no matrix has --min-nnz " + std::to_string(min_nnz) +
                " nonzeros (on a GPU the launch, not the program, times smaller ones; give "
                "larger matrices or --min-nnz 0)");
  train::policy p = make_policy(a.model, {}, a.ppo.run.run_dir, true);
  std::optional<train::lm_dataset> anchor;
  if (!a.sft_anchor.empty()) {
    data_args anchor_data;
    anchor_data.data = a.sft_anchor;
    anchor = sft_lm_dataset(p, load_samples(anchor_data, nullptr, 0));
    std::fprintf(stderr, "train-ppo: SFT anchor of %zu examples from %s, coefficient %g\n",
                 anchor->train.size(), a.sft_anchor.c_str(), a.ppo.sft_coef);
  }
  std::vector<const train::sft_sample*> used;
  for (const train::sft_sample& s : samples)
    if (s.split != "val") used.push_back(&s);  // the val split is held out for evaluation
  // Matrices remade from their generators (where stored so) and encoded in parallel.
  std::vector<train::ppo_task> tasks(used.size());
  train::parallel_for(used.size(), train::hardware_threads(), [&](size_t i) {
    const train::sft_sample& s = *used[i];
    const std::string id = s.name.empty() ? "sample" + std::to_string(i) : s.name;
    tasks[i] = train::make_ppo_task(p, id, train::to_matrix(s), s.op, s.k);
  });
  eval_options eval;
  eval.compile.arch = device_arch(*runner);
  eval.limits.launch_timeout_s = a.timeout_s;
  evaluator judge(*runner, eval);
  a.ppo.run.seed = a.model.seed;
  std::fprintf(stderr,
               "train-ppo: %zu tasks, %lld per step x %lld samples, advantage %s, executor %s; "
               "sampling temperature %g top-p %g",
               tasks.size(), static_cast<long long>(a.ppo.batch_size),
               static_cast<long long>(a.ppo.samples_per_task), train::advantage_name(a.ppo).c_str(),
               runner->name(), a.ppo.temperature, a.ppo.top_p);
  if (a.ppo.header_temperature > 0)
    std::fprintf(stderr, ", header temperature %g top-p %g", a.ppo.header_temperature,
                 a.ppo.header_top_p);
  std::fprintf(stderr, "\n");
  const train::ppo_result r = train::train_ppo(p, tasks, judge, a.ppo, anchor ? &*anchor : nullptr);
  if (!dp->is_main()) return;  // rank 0 writes the run's files
  const std::string final_dir = a.ppo.run.run_dir + "/final";
  p.save(final_dir);
  if (!r.steps.empty()) {
    const auto& f = r.steps.front();
    const auto& l = r.steps.back();
    double tied = 0, groups = 0;
    for (const auto& s : r.steps) {
      tied += s.groups_tied;
      groups += s.groups;
    }
    std::printf(
        "train-ppo: %zu steps, reward %.3f -> %.3f, compile rate %.2f -> %.2f, correct rate "
        "%.2f -> %.2f, tied groups left out %.0f/%.0f; policy saved to %s\n",
        r.steps.size(), f.reward_mean, l.reward_mean, f.compile_rate, l.compile_rate,
        f.correct_rate, l.correct_rate, tied, groups, final_dir.c_str());
  }
}

void add_ppo_command(CLI::App& app) {
  auto a = std::make_shared<ppo_args>();
  train::ppo_options& o = a->ppo;
  o.run.run_dir = "runs/ppo";
  o.run.steps = 20;
  o.optim.lr = 1e-5;
  CLI::App* cmd = app.add_subcommand(
      "train-ppo",
      "PPO on the hierarchical reward of the harness (compile, verify, time vs cuSPARSE)");
  // The seed's RL entry point is train_minimal; same flags (--steps, --max-nnz, --model-path).
  cmd->alias("train_minimal");
  add_model_options(cmd, a->model, false);
  add_data_options(cmd, a->data);
  add_run_options(cmd, o.run, o.optim);
  cmd->add_option("--batch-size", o.batch_size, "Tasks (matrices) per step")->capture_default_str();
  cmd->add_option("--samples-per-task", o.samples_per_task,
                  "Programs sampled per task (a group; batch-size x G rollouts per step)")
      ->capture_default_str();
  cmd->add_option("--advantage", o.advantage,
                  "Baseline: rloo (leave-one-out), grpo (group-normalised) or gae (value head); "
                  "default gae for --samples-per-task 1, else rloo");
  cmd->add_option("--mini-batch", o.mini_batch, "Rollouts per update")->capture_default_str();
  cmd->add_option("--ppo-epochs", o.ppo_epochs, "Passes over each step's rollouts")
      ->capture_default_str();
  cmd->add_option("--max-new-tokens", o.max_new_tokens, "Longest program")->capture_default_str();
  cmd->add_option("--temperature", o.temperature, "Sampling temperature")->capture_default_str();
  cmd->add_option("--top-k", o.top_k, "Sampling top-k (0: off)")->capture_default_str();
  cmd->add_option("--top-p", o.top_p, "Sampling top-p")->capture_default_str();
  cmd->add_option("--header-temperature", o.header_temperature,
                  "> 0: the program's header (FORMAT, LAUNCH, template line) sampled at this "
                  "temperature and --header-top-p, the source after it as above (0: off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--header-top-p", o.header_top_p, "Top-p of the header with --header-temperature")
      ->capture_default_str();
  cmd->add_option("--kl-coef", o.kl_coef, "KL penalty to the reference policy")
      ->capture_default_str();
  cmd->add_option("--target-kl", o.target_kl, "Adaptive KL controller target (0: fixed)")
      ->capture_default_str();
  cmd->add_option("--gamma", o.gamma, "GAE discount")->capture_default_str();
  cmd->add_option("--lam", o.lam, "GAE lambda")->capture_default_str();
  cmd->add_option("--cliprange", o.clip.cliprange, "Policy ratio clip")->capture_default_str();
  cmd->add_option("--cliprange-value", o.clip.cliprange_value, "Value clip")->capture_default_str();
  cmd->add_option("--vf-coef", o.clip.vf_coef, "Value loss weight")->capture_default_str();
  cmd->add_option("--reward-threads", o.reward_threads, "Programs judged at once")
      ->capture_default_str();
  cmd->add_option("--timeout", a->timeout_s, "Seconds per trial before a run is killed")
      ->capture_default_str();
  cmd->add_option("--min-nnz", a->min_nnz,
                  "Leave out reward matrices with fewer nonzeros (-1: " +
                      std::to_string(train::gpu_reward_min_nnz) +
                      " on a GPU, where smaller kernels are timed by their launch; 0 on the CPU)")
      ->capture_default_str();
  cmd->add_option("--sft-anchor", a->sft_anchor,
                  "SFT JSONL (train-sft's --data) whose loss joins every update: PPO-ptx")
      ->check(CLI::ExistingFile);
  cmd->add_option("--sft-coef", o.sft_coef,
                  "Weight of the SFT anchor's loss (> 0 with --sft-anchor)")
      ->capture_default_str();
  cmd->add_option("--sft-batch", o.sft_batch, "SFT anchor examples per update")
      ->capture_default_str();
  cmd->add_option("--sft-max-len", o.sft_max_len,
                  "Tokens per SFT anchor example (train-sft's --max-len)")
      ->capture_default_str();
  cmd->callback([a] { run_ppo(*a); });
}

}  // namespace

void add_train_commands(CLI::App& app) {
  add_lm_command(app, "pretrain",
                 "Causal-LM pre-training on CUDA code (the toolkit's headers + expert programs)",
                 false);
  add_lm_command(app, "train-sft", "SFT: matrix embedding -> expert kernel program", true);
  add_ppo_command(app);
}

}  // namespace sparserl::cli
