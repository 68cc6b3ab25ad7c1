#include "cli/train_setup.h"

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <thread>

#include "model/qwen3_init.h"
#include "sparse/error.h"
#include "text/bpe_trainer.h"
#include "train/lm_examples.h"
#include "train/parallel_for.h"
#include "train/program_sampler.h"
#include "train/prompt.h"

namespace fs = std::filesystem;

namespace sparserl::cli {

void add_model_options(CLI::App* cmd, model_args& a, bool allow_init) {
  cmd->add_option("--model-path", a.model_path,
                  allow_init
                      ? "HF Qwen3 directory (config.json + safetensors); default: a new "
                        "small Qwen3 trained from scratch"
                      : "HF Qwen3 directory (config.json + safetensors), e.g. an SFT output");
  cmd->add_option(
      "--tokenizer-path", a.tokenizer_path,
      "Directory with tokenizer.json (default: --model-path, or one trained on the data)");
  cmd->add_option("--device", a.device, "Torch device and executor: cpu, gpu or auto")
      ->capture_default_str();
  cmd->add_option("--dtype", a.dtype, "auto (bf16 for a LoRA base on a GPU, else fp32), fp32, bf16")
      ->capture_default_str();
  cmd->add_option("--max-nnz", a.max_nnz, "Sampled nonzeros in the matrix embedding")
      ->capture_default_str();
  cmd->add_option("--embed-dim", a.embed_dim, "Sinusoid width per coordinate")
      ->capture_default_str();
  cmd->add_option("--lora-rank", a.lora_rank, "Train LoRA adapters of this rank (0: all weights)")
      ->capture_default_str();
  cmd->add_option("--lora-alpha", a.lora_alpha, "LoRA alpha")->capture_default_str();
  cmd->add_option("--lora-dropout", a.lora_dropout, "LoRA dropout")->capture_default_str();
  cmd->add_option("--lora-targets", a.lora_targets, "LoRA modules (default: all seven linears)");
  cmd->add_option("--seed", a.seed, "Seed of initialisation, data order and sampling")
      ->capture_default_str();
  cmd->add_flag("--deterministic", a.deterministic,
                "Only deterministic GPU kernels: the same seed gives the same run "
                "(SFT on an H100: 25% fewer tokens/s)");
  if (!allow_init) return;
  cmd->add_option("--init-hidden", a.init_hidden, "New model: hidden size")->capture_default_str();
  cmd->add_option("--init-layers", a.init_layers, "New model: layers")->capture_default_str();
  cmd->add_option("--init-heads", a.init_heads, "New model: attention heads")
      ->capture_default_str();
  cmd->add_option("--init-kv-heads", a.init_kv_heads, "New model: key/value heads")
      ->capture_default_str();
  cmd->add_option("--init-intermediate", a.init_intermediate, "New model: MLP width")
      ->capture_default_str();
  cmd->add_option("--tokenizer-vocab", a.tokenizer_vocab, "New tokenizer: vocabulary size")
      ->capture_default_str();
}

void add_data_options(CLI::App* cmd, data_args& a) {
  cmd->add_option("--data", a.data, "SFT JSONL (rows, cols, shape, format, code per line)");
  cmd->add_option("--dataset-dir,--matrices", a.dataset_dir,
                  "Directory of SFT .jsonl files, or of .mtx files labelled with the heuristic "
                  "(--matrices: as dataset build and serve call a folder of .mtx files)");
  cmd->add_option("--generate", a.generate, "Generate N matrices (heuristic labels) instead");
  cmd->add_option("--max-rows", a.max_rows, "--generate: rows drawn from 16..R")
      ->capture_default_str();
  cmd->add_option("--workers", a.workers, "GPU worker processes of the harness")
      ->capture_default_str();
}

void add_run_options(CLI::App* cmd, train::run_options& run, train::optimizer_options& o) {
  cmd->add_option("-o,--output-dir,--output", run.run_dir,
                  "Run directory: metrics.jsonl, checkpoints/, final/")
      ->capture_default_str();
  cmd->add_option("--steps", run.steps, "Optimizer steps")->capture_default_str();
  cmd->add_option("--checkpoint-every", run.checkpoint_every,
                  "Checkpoint every N steps (0: at the end)")
      ->capture_default_str();
  cmd->add_option("--keep-last", run.keep_last, "Checkpoints kept")->capture_default_str();
  cmd->add_flag("--resume", run.resume, "Continue from the run directory's latest checkpoint");
  cmd->add_option("--stop-after", run.stop_after,
                  "Stop after N steps of this process (resume later)");
  cmd->add_option("--lr", o.lr, "Peak learning rate")->capture_default_str();
  cmd->add_option("--warmup", o.warmup_steps, "Warm-up steps")->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "AdamW weight decay")->capture_default_str();
  cmd->add_option("--max-grad-norm", o.max_grad_norm, "Gradient clipping (0: off)")
      ->capture_default_str();
  cmd->add_flag("!--no-progress", run.progress, "No progress bar");
}

torch::Device torch_device(const std::string& device) {
  if (device == "cpu") return torch::kCPU;
  if (device == "gpu" || device == "cuda") {
    if (!torch::cuda::is_available())
      throw error("--device " + device + ": this libtorch sees no CUDA GPU");
    return torch::kCUDA;
  }
  if (device == "auto") return torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  throw error("--device " + device + ": expected cpu, gpu or auto");
}

torch::Dtype torch_dtype(const std::string& dtype, torch::Device device, bool lora) {
  if (dtype == "fp32") return torch::kFloat32;
  if (dtype == "bf16") return torch::kBFloat16;
  if (dtype == "auto") return device.is_cuda() && lora ? torch::kBFloat16 : torch::kFloat32;
  throw error("--dtype " + dtype + ": expected auto, fp32 or bf16");
}

namespace {

// The GPU's atomics-based kernels (embedding and attention backward, split reductions) sum in
// whatever order threads arrive, so the same seed gave different SFT policies (H100, 2026-12-06:
// 0-4 of 27 held-out greedy programs). cuBLAS needs a fixed workspace for the same, set before
// its first handle (this runs before the model touches the GPU).
void use_deterministic_kernels() {
  setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 0);
  at::globalContext().setDeterministicAlgorithms(true, false);
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
}

std::string train_tokenizer(const model_args& a, const std::vector<std::string>& texts,
                            const std::string& out_dir) {
  if (texts.empty()) throw error("no text to train a tokenizer on (give --tokenizer-path)");
  const std::string dir = out_dir + "/tokenizer";
  text::bpe_trainer_options o;
  o.vocab_size = a.tokenizer_vocab;
  text::bpe_trainer trainer(o);
  for (const std::string& t : texts) trainer.add_text(t);
  trainer.save(trainer.train(), dir);
  std::fprintf(stderr, "tokenizer: trained %d tokens on %zu texts into %s\n", a.tokenizer_vocab,
               texts.size(), dir.c_str());
  return dir;
}

}  // namespace

train::policy make_policy(const model_args& a, const std::vector<std::string>& texts,
                          const std::string& out_dir, bool value_head) {
  // Debian's libtorch starts with one intra-op thread; use the cores unless told otherwise.
  if (!std::getenv("OMP_NUM_THREADS"))
    torch::set_num_threads(
        std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / a.processes_per_host));
  if (a.deterministic) use_deterministic_kernels();
  train::policy_load_options o;
  o.device = torch_device(a.device);
  if (o.device.is_cuda()) o.device = torch::Device(torch::kCUDA, a.cuda_index);
  o.dtype = torch_dtype(a.dtype, o.device, a.lora_rank > 0);
  o.encoding.max_nnz = a.max_nnz;
  o.encoding.dim = a.embed_dim;
  o.with_value_head = value_head;
  o.seed = a.seed;
  if (a.lora_rank > 0) {
    lora_config l;
    l.rank = a.lora_rank;
    l.alpha = a.lora_alpha;
    l.dropout = a.lora_dropout;
    if (!a.lora_targets.empty()) l.target_modules = a.lora_targets;
    o.lora = l;
  }
  if (!a.model_path.empty())
    return train::policy::load(a.model_path,
                               a.tokenizer_path.empty() ? a.model_path : a.tokenizer_path, o);
  const std::string tokenizer =
      a.tokenizer_path.empty() ? train_tokenizer(a, texts, out_dir) : a.tokenizer_path;
  qwen3_config cfg =
      tiny_qwen3_config(static_cast<int64_t>(text::bpe_tokenizer::load(tokenizer).vocab_size()));
  cfg.hidden_size = a.init_hidden;
  cfg.num_hidden_layers = a.init_layers;
  cfg.num_attention_heads = a.init_heads;
  cfg.num_key_value_heads = a.init_kv_heads;
  cfg.head_dim = a.init_hidden / a.init_heads;
  cfg.intermediate_size = a.init_intermediate;
  validate(cfg, "the new model (--init-*)");
  std::fprintf(stderr, "model: a new Qwen3 (hidden %lld, %lld layers, vocab %lld) from seed %llu\n",
               static_cast<long long>(cfg.hidden_size),
               static_cast<long long>(cfg.num_hidden_layers),
               static_cast<long long>(cfg.vocab_size), static_cast<unsigned long long>(a.seed));
  return train::policy::create(cfg, tokenizer, o);
}

std::vector<train::sft_sample> load_samples(const data_args& a, program_runner* runner,
                                            int64_t fallback_generate) {
  const int given = !a.data.empty() + !a.dataset_dir.empty() + (a.generate >= 0);
  if (given > 1) throw error("give one of --data, --dataset-dir and --generate");
  if (!a.data.empty()) return train::read_sft_jsonl(a.data);
  std::vector<train::matrix_item> items;
  if (!a.dataset_dir.empty()) {
    if (!fs::is_directory(a.dataset_dir))
      throw error("--dataset-dir " + a.dataset_dir + ": not a directory");
    std::vector<std::string> jsonl;
    for (const auto& e : fs::directory_iterator(a.dataset_dir))
      if (e.path().extension() == ".jsonl") jsonl.push_back(e.path().string());
    std::sort(jsonl.begin(), jsonl.end());
    if (!jsonl.empty()) {
      std::vector<train::sft_sample> out;
      for (const std::string& f : jsonl) {
        std::vector<train::sft_sample> part = train::read_sft_jsonl(f);
        out.insert(out.end(), part.begin(), part.end());
      }
      return out;
    }
    items = train::matrix_files(a.dataset_dir);
  } else {
    const int64_t n = a.generate >= 0 ? a.generate : fallback_generate;
    if (n <= 0) throw error("no training data: give --data, --dataset-dir or --generate");
    items = train::generated_matrices(n, 1, a.max_rows);
  }
  train::dataset_build_options o;
  o.label = train::labeller::heuristic;
  o.verify = runner != nullptr;
  o.val_fraction = 0.2;
  // In memory only (nothing is written as JSONL here), so no size cap: PPO on a GPU wants large
  // matrices (train/reward_matrices.h).
  o.max_nnz = std::numeric_limits<int64_t>::max();
  eval_options eval;
  train::dataset_build_result r = train::build_sft_dataset(items, runner, eval, o);
  for (const std::string& w : r.warnings)
    std::fprintf(stderr, "sparserl: warning: %s\n", w.c_str());
  if (r.samples.empty()) throw error("no matrix could be labelled");
  return r.samples;
}

std::vector<std::string> tokenizer_texts(const std::vector<train::sft_sample>& samples) {
  std::vector<std::string> out;
  const std::vector<std::string> phrases = train::structure_phrases();
  for (const train::sft_sample& s : samples) {
    out.push_back(s.code + train::program_end);
    // The prompt's words for the vocabulary; a sample stored by its generator is not remade for
    // its longest row (any number spells the same way) nor its structure (the phrases taken in
    // turn, each about as often as another).
    train::prompt_matrix m{s.n_rows, s.n_cols, s.nnz(), 0,
                           phrases[out.size() / 2 % phrases.size()]};
    std::vector<int64_t> lengths(s.n_rows, 0);
    for (int32_t r : s.rows) m.longest_row = std::max(m.longest_row, ++lengths[r]);
    out.push_back(train::task_prompt(s.op, s.k, m));
  }
  return out;
}

train::lm_dataset sft_lm_dataset(const train::policy& p,
                                 const std::vector<train::sft_sample>& samples) {
  train::lm_dataset d;
  // The matrices (remade from their generators where stored so) and their encodings in parallel:
  // large ones take a pass each; neither is kept beyond its encoding.
  // The prompt states the matrix's row lengths and structure, so it is made from the matrix too.
  d.prefixes.resize(samples.size());
  std::vector<train::prompt_matrix> shapes(samples.size());
  train::parallel_for(samples.size(), train::hardware_threads(), [&](size_t i) {
    train::matrix_input input = train::read_matrix(p, train::to_matrix(samples[i]));
    shapes[i] = std::move(input.facts);
    d.prefixes[i] = std::move(input.encoding);
  });
  for (size_t i = 0; i < samples.size(); ++i) {
    const train::sft_sample& s = samples[i];
    train::lm_example e = train::make_sft_example(p, train::task_prompt(s.op, s.k, shapes[i]),
                                                  s.code, static_cast<int64_t>(i));
    (s.split == "val" ? d.val : d.train).push_back(std::move(e));
  }
  if (d.train.empty()) throw error("no training samples (every sample is in the val split)");
  return d;
}

std::unique_ptr<train::data_parallel> join_data_parallel(model_args& a) {
  const train::launch_env env = train::launch_env_from_environment();
  if (env.world_size == 1) return std::make_unique<train::data_parallel>();
  a.processes_per_host = env.local_world_size;
  torch::Device device = torch_device(a.device);
  if (device.is_cuda()) {
    a.cuda_index = env.local_rank;
    device = torch::Device(torch::kCUDA, env.local_rank);
  }
  auto group = std::make_unique<train::data_parallel>(env, device);
  std::fprintf(stderr, "data parallel: rank %d of %d (%s, local rank %d)\n", env.rank,
               env.world_size, group->backend(), env.local_rank);
  return group;
}

void prepare_run_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw error(dir + ": cannot create the run directory (" + ec.message() + ")");
}

}  // namespace sparserl::cli
