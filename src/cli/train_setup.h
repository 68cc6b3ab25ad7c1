#pragma once
// What pretrain, train-sft, train-ppo, generate and quickstart share: the torch device and dtype,
// the policy (loaded from an HF directory, or a tiny Qwen3 made from scratch with a tokenizer
// trained on the run's own text), the SFT samples (--data, --dataset-dir or --generate) and the
// optimisation flags.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "eval/runner.h"
#include "train/data_parallel.h"
#include "train/dataset_build.h"
#include "train/policy.h"
#include "train/sft_data.h"
#include "train/trainer_lm.h"
#include "train/trainer_options.h"

namespace sparserl::cli {

struct model_args {
  std::string model_path, tokenizer_path;
  std::string device = "auto", dtype = "auto";
  int max_nnz = 128, embed_dim = 32;
  // A model from scratch (no --model-path): a small Qwen3 shape.
  int64_t init_hidden = 128, init_layers = 4, init_heads = 4, init_kv_heads = 2;
  int64_t init_intermediate = 384;
  int tokenizer_vocab = 2048;
  int cuda_index = 0;          // the GPU of this process (LOCAL_RANK when data-parallel)
  int processes_per_host = 1;  // ranks sharing this host's cores (LOCAL_WORLD_SIZE)
  int lora_rank = 0;           // > 0: train LoRA adapters on a frozen base
  double lora_alpha = 16, lora_dropout = 0.05;
  std::vector<std::string> lora_targets;
  uint64_t seed = 0;
  // Only deterministic CUDA kernels (same seed, same run on a GPU; an op without one raises).
  bool deterministic = false;
};

struct data_args {
  std::string data;         // SFT JSONL
  std::string dataset_dir;  // .jsonl files, or .mtx files to label with the heuristic
  int64_t generate = -1;    // generated matrices
  int32_t max_rows = 256;
  int workers = 1;
};

void add_model_options(CLI::App* cmd, model_args& a, bool allow_init);
void add_data_options(CLI::App* cmd, data_args& a);
void add_run_options(CLI::App* cmd, train::run_options& run, train::optimizer_options& optim);

torch::Device torch_device(const std::string& device);
torch::Dtype torch_dtype(const std::string& dtype, torch::Device device, bool lora);

// From --model-path, or (allowed only where training from scratch makes sense) a new tiny model
// whose tokenizer is --tokenizer-path or one trained on `texts` into out_dir/tokenizer.
train::policy make_policy(const model_args& a, const std::vector<std::string>& texts,
                          const std::string& out_dir, bool value_head);

// The SFT samples of --data / --dataset-dir / --generate (labelled with the feature heuristic,
// verified on `runner` when given). Throws when none of them is set and `fallback_generate` <= 0.
std::vector<train::sft_sample> load_samples(const data_args& a, program_runner* runner,
                                            int64_t fallback_generate);

// The texts a new tokenizer learns from: programs and their prompts.
std::vector<std::string> tokenizer_texts(const std::vector<train::sft_sample>& samples);

// SFT examples with matrix prefixes; samples marked "val" go to the validation set.
train::lm_dataset sft_lm_dataset(const train::policy& p,
                                 const std::vector<train::sft_sample>& samples);

// `dir` exists afterwards; prints where a run writes.
void prepare_run_dir(const std::string& dir);

// Joins the data-parallel group of a torchrun-style launch (RANK, WORLD_SIZE, ... in the
// environment; train/data_parallel.h), or returns a single-process group when there is none.
// Points `a` at this rank's GPU and share of the cores.
std::unique_ptr<train::data_parallel> join_data_parallel(model_args& a);

}  // namespace sparserl::cli
