// sparserl evaluate-policy: a trained policy against the alternatives on a set of matrices (per
// matrix: compile and correct rate of K samples, the greedy program's and the best of K's
// speed-up over cuSPARSE, the heuristic's and the tuned best's; train/policy_evaluation.h),
// printed as a table and written as RUN/evaluate_policy.json and evaluate_policy.png.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "cli/python_tool.h"
#include "cli/runner_choice.h"
#include "cli/train_setup.h"
#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "sparse/matrix_market.h"
#include "train/policy_evaluation.h"

namespace sparserl::cli {
namespace {

namespace fs = std::filesystem;

struct evaluate_policy_args {
  model_args model;
  std::vector<std::string> matrices;
  std::string op = "spmv", output = "runs/evaluate_policy", baselines;
  int k = 64, workers = 1;
  train::policy_evaluation_options eval;
};

bool is_matrix_file(const fs::path& p) {
  const std::string name = p.filename().string();
  const auto ends = [&](const std::string& tail) {
    return name.size() > tail.size() &&
           name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".mtx") || ends(".mtx.gz");
}

// Every FILE as given, every DIR's .mtx / .mtx.gz files sorted by name.
std::vector<fs::path> matrix_paths(const std::vector<std::string>& args) {
  std::vector<fs::path> out;
  for (const std::string& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<fs::path> in_dir;
      for (const auto& entry : fs::directory_iterator(a))
        if (entry.is_regular_file() && is_matrix_file(entry.path())) in_dir.push_back(entry.path());
      if (in_dir.empty()) throw error(a + ": no .mtx files in this directory");
      std::sort(in_dir.begin(), in_dir.end());
      out.insert(out.end(), in_dir.begin(), in_dir.end());
    } else if (fs::is_regular_file(a, ec)) {
      out.emplace_back(a);
    } else {
      throw error(a + ": no such file or directory");
    }
  }
  return out;
}

void draw_png(const std::string& json_path, const std::string& png_path) {
  try {
    const std::string tool = find_python_tool("plot_policy_eval.py");
    const std::string python = find_python();
    // Absolute paths: the child starts in a fresh empty directory.
    const sandbox_result r = run_python(
        python, {tool, fs::absolute(json_path).string(), fs::absolute(png_path).string()}, 300);
    if (r.exit_code != 0) throw error(tool + ": " + last_line(r.err));
    std::printf("plot: %s\n", png_path.c_str());
  } catch (const error& e) {  // the numbers are written; a missing matplotlib costs only the PNG
    std::fprintf(stderr, "evaluate-policy: no PNG: %s\n", e.what());
  }
}

void run_evaluate_policy(evaluate_policy_args& a) {
  const std::optional<sparse_op> op = parse_op(a.op);
  if (!op) throw error("--op " + a.op + ": expected spmv or spmm");
  if (a.eval.samples < 1) throw error("--samples must be at least 1");
  if (!a.baselines.empty()) {
    const std::string text = read_file_decompressed(a.baselines, size_t{256} << 20);
    nlohmann::json earlier;
    try {
      earlier = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw error(a.baselines + ": not JSON: " + e.what());
    }
    try {
      a.eval.baselines = train::baselines_from_json(earlier);
    } catch (const error& e) {
      throw error(a.baselines + ": " + e.what());
    }
  }
  const std::vector<fs::path> paths = matrix_paths(a.matrices);
  std::vector<csr_matrix> matrices;
  for (const fs::path& p : paths) matrices.push_back(read_matrix_market(p.string()));
  train::policy p = make_policy(a.model, {}, a.output, false);
  std::unique_ptr<program_runner> runner = make_runner(a.model.device, a.workers);
  eval_options eo;
  eo.compile.arch = device_arch(*runner);
  evaluator judge(*runner, eo);
  std::vector<train::eval_matrix> tasks;
  const int32_t k = *op == sparse_op::spmm ? a.k : 1;
  for (size_t i = 0; i < paths.size(); ++i)
    tasks.push_back({paths[i].filename().string(), *op, k, &matrices[i]});
  a.eval.sampling.seed = a.model.seed;
  a.eval.executor = runner->name();
  a.eval.tune_threads = a.workers;
  const train::policy_evaluation e = train::evaluate_policy(p, tasks, judge, a.eval);
  std::fputs(train::format_table(e).c_str(), stdout);
  fs::create_directories(a.output);
  const std::string json_path = a.output + "/evaluate_policy.json";
  nlohmann::json j = train::to_json(e);
  j["model"] = a.model.model_path;
  j["op"] = op_name(*op);
  j["k"] = k;
  write_file_atomic(json_path, {j.dump(1) + "\n"});
  std::printf("written: %s\n", json_path.c_str());
  draw_png(json_path, a.output + "/evaluate_policy.png");
}

}  // namespace

void add_evaluate_policy_command(CLI::App& app) {
  auto a = std::make_shared<evaluate_policy_args>();
  CLI::App* cmd = app.add_subcommand(
      "evaluate-policy",
      "A policy on a set of matrices: compile and correct rate of K samples, greedy and best-of-K "
      "speed-ups beside the heuristic's and the tuned best's");
  cmd->add_option("--model,--model-path", a->model.model_path, "Policy directory (e.g. RUN/final)")
      ->required();
  cmd->add_option("--tokenizer,--tokenizer-path", a->model.tokenizer_path,
                  "tokenizer.json directory (default: --model)");
  cmd->add_option("--matrices,--dataset-dir", a->matrices,
                  "Matrix Market files, or directories of them")
      ->required();
  cmd->add_option("--samples", a->eval.samples, "Sampled programs per matrix (K)")
      ->capture_default_str();
  cmd->add_option("--op", a->op, "spmv or spmm")->capture_default_str();
  cmd->add_option("--k", a->k, "SpMM: columns of B")->capture_default_str();
  cmd->add_option("--max-new-tokens", a->eval.max_new_tokens, "Longest program")
      ->capture_default_str();
  cmd->add_option("--temperature", a->eval.sampling.temperature, "Sampling temperature (K samples)")
      ->capture_default_str();
  cmd->add_option("--top-p", a->eval.sampling.top_p, "Nucleus mass (K samples)")
      ->capture_default_str();
  cmd->add_option("--batch", a->eval.batch, "Programs generated at once")->capture_default_str();
  cmd->add_option("--seed", a->model.seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--device", a->model.device, "cpu, gpu or auto")->capture_default_str();
  cmd->add_option("--workers", a->workers, "GPU worker processes")->capture_default_str();
  cmd->add_flag("!--no-tune", a->eval.tune, "Skip autotuning (no tuned-best column)");
  cmd->add_option("--baselines", a->baselines,
                  "An earlier evaluate_policy.json: the tuned best of the same matrices (by "
                  "content) is taken from it instead of tuning again; its program and the "
                  "heuristic's are still timed in this run");
  cmd->add_option("-o,--output,--output-dir", a->output,
                  "Directory for evaluate_policy.json and .png")
      ->capture_default_str();
  cmd->callback([a] { run_evaluate_policy(*a); });
}

}  // namespace sparserl::cli
