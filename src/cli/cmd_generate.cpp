// sparserl generate: sample kernel programs for a matrix from a trained policy, write them, and
// with --eval judge each with the harness (compile, verify, time vs cuSPARSE).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/runner_choice.h"
#include "cli/train_setup.h"
#include "eval/evaluator.h"
#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "train/program_sampler.h"

namespace sparserl::cli {
namespace {

struct generate_args {
  model_args model;
  std::string matrix, op = "spmv", output = "generated";
  int k = 64, samples = 4, workers = 1;
  int64_t max_new_tokens = 1024;
  sampling_options sampling{0.7, 0, 0.95, 0};
  bool eval = false;
};

void run_generate(generate_args& a) {
  const std::optional<sparse_op> op = parse_op(a.op);
  if (!op) throw error("--op " + a.op + ": expected spmv or spmm");
  if (a.samples < 1) throw error("--samples must be at least 1");
  if (a.model.model_path.empty()) throw error("generate: --model is required");
  std::string matrix_id;
  const csr_matrix matrix = load_matrix_or_default(a.matrix, matrix_id);
  train::policy p = make_policy(a.model, {}, a.output, false);
  const train::matrix_input input = train::read_matrix(p, matrix);
  const int32_t k = *op == sparse_op::spmm ? a.k : 1;
  std::vector<train::program_request> requests(static_cast<size_t>(a.samples), {*op, k, &input});
  a.sampling.seed = a.model.seed;
  const train::sampled_programs s =
      train::sample_programs(p, requests, a.max_new_tokens, a.sampling);

  std::filesystem::create_directories(a.output);
  std::unique_ptr<program_runner> runner;
  std::unique_ptr<evaluator> judge;
  if (a.eval) {
    runner = make_runner(a.model.device, a.workers);
    eval_options o;
    o.compile.arch = device_arch(*runner);
    judge = std::make_unique<evaluator>(*runner, o);
  }
  std::string verdict_lines;
  for (size_t i = 0; i < s.generations.size(); ++i) {
    const generation& g = s.generations[i];
    const std::string path = a.output + "/program_" + std::to_string(i) + ".cu";
    write_file_atomic(path, {g.text});
    std::printf("%-3zu %5zu tokens (%s) -> %s", i, g.ids.size(), g.finish_reason.c_str(),
                path.c_str());
    if (judge) {
      const verdict v = judge->evaluate({*op, &matrix, k, matrix_id}, g.text);
      std::printf("  %s reward %.3f", v.correct ? "correct" : ("FAILED: " + v.failure).c_str(),
                  v.reward);
      if (v.speedup) std::printf(" speedup %.2fx", *v.speedup);
      nlohmann::json j = verdict_to_json(v);
      j["sample"] = i;
      j["program"] = path;
      verdict_lines += j.dump() + "\n";
    }
    std::printf("\n");
  }
  if (judge) write_file_atomic(a.output + "/verdicts.jsonl", {verdict_lines});
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto a = std::make_shared<generate_args>();
  CLI::App* cmd =
      app.add_subcommand("generate", "Sample kernel programs for a matrix from a policy");
  cmd->add_option("--model,--model-path", a->model.model_path, "Policy directory (e.g. RUN/final)")
      ->required();
  cmd->add_option("--tokenizer,--tokenizer-path", a->model.tokenizer_path,
                  "tokenizer.json directory (default: --model)");
  cmd->add_option("--matrix", a->matrix,
                  "Matrix Market file; default: the embedded 64x64-grid stencil");
  cmd->add_option("--op", a->op, "spmv or spmm")->capture_default_str();
  cmd->add_option("--k", a->k, "SpMM: columns of B")->capture_default_str();
  cmd->add_option("--samples", a->samples, "Programs to sample")->capture_default_str();
  cmd->add_option("--max-new-tokens", a->max_new_tokens, "Longest program")->capture_default_str();
  cmd->add_option("--temperature", a->sampling.temperature, "0: greedy")->capture_default_str();
  cmd->add_option("--top-k", a->sampling.top_k, "0: off")->capture_default_str();
  cmd->add_option("--top-p", a->sampling.top_p, "Nucleus mass")->capture_default_str();
  cmd->add_option("--seed", a->model.seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--device", a->model.device, "cpu, gpu or auto")->capture_default_str();
  cmd->add_option("--workers", a->workers, "GPU worker processes (--eval)")->capture_default_str();
  cmd->add_option("-o,--output,--output-dir", a->output,
                  "Directory for program_N.cu (and verdicts.jsonl)")
      ->capture_default_str();
  cmd->add_flag("--eval", a->eval, "Judge each program with the harness");
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace sparserl::cli
