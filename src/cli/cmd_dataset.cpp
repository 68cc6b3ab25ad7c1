// `sparserl dataset build | retime | refresh | corpus | score-heuristic`: the SFT data set
// (matrices labelled with expert programs), its timed labels brought up to date with the expert
// library, the CUDA pre-training corpus (train/dataset_build.h, train/dataset_retime.h,
// train/cuda_corpus.h), and the feature heuristic judged against timed labels
// (train/heuristic_score.h).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/runner_choice.h"
#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "train/cuda_corpus.h"
#include "train/data_split.h"
#include "train/dataset_build.h"
#include "train/dataset_refresh.h"
#include "train/dataset_retime.h"
#include "train/heuristic_score.h"
#include "train/parallel_for.h"

namespace sparserl::cli {

namespace {

struct build_args {
  std::string matrices, output, extend, device = "auto", op = "spmv", label = "auto";
  std::vector<std::string> families;
  int64_t generate = -1;
  uint64_t seed = 1;
  int32_t max_rows = 256, min_rows = 16;
  std::vector<int32_t> block_sizes;
  int threads = 0, workers = 1;
  bool no_verify = false, no_progress = false;
  train::dataset_build_options build;
};

train::labeller parse_labeller(const std::string& text) {
  if (text == "auto") return train::labeller::automatic;
  if (text == "tune") return train::labeller::autotune;
  if (text == "heuristic") return train::labeller::heuristic;
  throw error("--label " + text + ": expected auto, tune or heuristic");
}

int count_splits(const std::vector<train::sft_sample>& samples, const std::string& split) {
  int n = 0;
  for (const train::sft_sample& s : samples) n += s.split == split;
  return n;
}

void run_build(build_args& a) {
  if (a.matrices.empty() == (a.generate < 0))
    throw error("dataset build: give --matrices DIR or --generate N (one of them)");
  const std::optional<sparse_op> op = parse_op(a.op);
  if (!op) throw error("--op " + a.op + ": expected spmv or spmm");
  train::dataset_build_options& o = a.build;
  o.op = *op;
  o.label = parse_labeller(a.label);
  o.verify = !a.no_verify;
  o.progress = !a.no_progress;
  o.threads = a.threads > 0 ? a.threads : train::hardware_threads();
  // --extend: the earlier labels are kept as they are, and their matrices are not labelled again.
  std::vector<train::sft_sample> earlier;
  if (!a.extend.empty()) {
    earlier = train::read_sft_jsonl(a.extend);
    o.already_labelled = train::structure_hashes(earlier, o.threads);
  }
  const std::vector<train::matrix_item> items =
      a.matrices.empty() ? train::generated_matrices(a.generate, a.seed, a.max_rows, a.families,
                                                     a.min_rows, o.threads, a.block_sizes)
                         : train::matrix_files(a.matrices);
  // Unverified heuristic labels need no executor at all.
  std::unique_ptr<program_runner> runner;
  if (o.label != train::labeller::heuristic || o.verify) runner = make_runner(a.device, a.workers);
  eval_options eval;
  if (runner) eval.compile.arch = device_arch(*runner);
  const train::dataset_build_result r = train::build_sft_dataset(items, runner.get(), eval, o);
  for (const std::string& w : r.warnings)
    std::fprintf(stderr, "sparserl: warning: %s\n", w.c_str());
  std::vector<train::sft_sample> all = earlier;
  all.insert(all.end(), r.samples.begin(), r.samples.end());
  if (all.empty()) throw error("dataset build: no matrix could be labelled");
  train::write_sft_jsonl(a.output, all);
  std::printf("wrote %s: %zu samples (%d train, %d val), labels: %s", a.output.c_str(), all.size(),
              count_splits(all, "train"), count_splits(all, "val"), r.method.c_str());
  if (!a.extend.empty())
    std::printf("; %zu from %s, %zu new, %lld already labelled", earlier.size(), a.extend.c_str(),
                r.samples.size(), static_cast<long long>(r.already_labelled));
  if (r.duplicates + r.too_large + r.unlabelled > 0)
    std::printf("; left out: %lld duplicate, %lld too large, %lld unlabelled",
                static_cast<long long>(r.duplicates), static_cast<long long>(r.too_large),
                static_cast<long long>(r.unlabelled));
  std::printf("\n");
}

struct retime_args {
  std::string labels, output, device = "gpu";
  int threads = 0, workers = 1;
  double time_limit_s = 0;
  bool no_progress = false, dry_run = false;
};

void run_retime(const retime_args& a) {
  std::vector<train::sft_sample> samples = train::read_sft_jsonl(a.labels);
  const int threads = a.threads > 0 ? a.threads : train::hardware_threads();
  if (a.dry_run) {  // what would be timed; no runner, nothing written
    const train::retime_plan p = train::plan_retime(samples, threads);
    std::printf("%s: %lld timed labels, %lld complete; %lld candidates to time:", a.labels.c_str(),
                static_cast<long long>(p.labels), static_cast<long long>(p.up_to_date),
                static_cast<long long>(p.new_candidates));
    for (const auto& [name, count] : p.by_template)
      std::printf(" %s %lld", name.c_str(), static_cast<long long>(count));
    std::printf("; %lld labels not timed\n", static_cast<long long>(p.not_timed));
    return;
  }
  if (a.output.empty()) throw error("dataset retime: give -o FILE (or --dry-run)");
  std::unique_ptr<program_runner> runner = make_runner(a.device, a.workers);
  if (std::string(runner->name()) != "gpu") throw error(train::retime_timing_error(*runner));
  eval_options eval;
  eval.compile.arch = device_arch(*runner);
  train::retime_options o;
  o.threads = threads;
  o.progress = !a.no_progress;
  if (a.time_limit_s < 0) throw error("--time-limit must be >= 0 seconds");
  o.time_limit_s = a.time_limit_s;
  const train::retime_result r = train::retime_labels(std::move(samples), *runner, eval, o);
  for (const std::string& w : r.warnings)
    std::fprintf(stderr, "sparserl: warning: %s\n", w.c_str());
  train::write_sft_jsonl(a.output, r.samples);
  std::printf(
      "wrote %s: %zu samples; %lld timed labels extended by %lld new candidates, %lld of them "
      "now labelled by a new one; %lld already complete, %lld not timed (left as they were)",
      a.output.c_str(), r.samples.size(), static_cast<long long>(r.retimed),
      static_cast<long long>(r.new_candidates), static_cast<long long>(r.relabelled),
      static_cast<long long>(r.up_to_date), static_cast<long long>(r.not_timed));
  if (r.failed > 0)
    std::printf("; %lld whose label no longer ran (left as they were)",
                static_cast<long long>(r.failed));
  if (r.not_reached > 0)
    std::printf("; %lld not reached within --time-limit (left as they were: run again on %s)",
                static_cast<long long>(r.not_reached), a.output.c_str());
  std::printf("\n");
}

struct corpus_args {
  std::string output;
  bool no_experts = false, no_toolkit = false;
  train::corpus_options corpus;
};

void run_corpus(const corpus_args& a) {
  train::corpus_options o = a.corpus;
  o.expert_programs = !a.no_experts;
  o.toolkit = !a.no_toolkit;
  train::corpus_stats s;
  const std::vector<train::corpus_document> docs = train::build_cuda_corpus(o, &s);
  if (docs.empty()) throw error("dataset corpus: no document fits (see --max-bytes)");
  train::write_corpus_jsonl(a.output, docs);
  size_t val = 0;
  for (const train::corpus_document& d : docs) val += d.split == "val";
  std::printf(
      "wrote %s: %zu documents (%zu train, %zu val), %.2f MiB: %lld expert programs, "
      "%lld toolkit files",
      a.output.c_str(), docs.size(), docs.size() - val, val,
      static_cast<double>(s.bytes) / (1 << 20), static_cast<long long>(s.expert_documents),
      static_cast<long long>(s.toolkit_documents));
  if (s.skipped_over_cap + s.skipped_large + s.skipped_binary > 0)
    std::printf("; left out: %lld over --max-bytes, %lld over %lld bytes each, %lld binary",
                static_cast<long long>(s.skipped_over_cap), static_cast<long long>(s.skipped_large),
                static_cast<long long>(o.max_document_bytes),
                static_cast<long long>(s.skipped_binary));
  std::printf("\n");
}

void add_build(CLI::App& dataset) {
  auto a = std::make_shared<build_args>();
  CLI::App* cmd = dataset.add_subcommand(
      "build",
      "SFT data (JSONL): each matrix labelled with the autotuner's best expert program "
      "(GPU) or the feature heuristic's pick (CPU), split train/val by matrix");
  // One of the two, checked in run_build (a one-line error, as for every bad argument).
  cmd->add_option("--matrices,--dataset-dir", a->matrices,
                  "Directory of .mtx / .mtx.gz files (recursive)");
  cmd->add_option("--generate", a->generate,
                  "Generate N matrices across the generator families instead");
  cmd->add_option("--families", a->families,
                  "--generate: comma-separated families to draw from (default: the classic ones; "
                  "`sparserl matrix families` lists all)")
      ->delimiter(',');
  cmd->add_option("--block-sizes", a->block_sizes,
                  "--generate: dense block sizes (comma-separated, 1..64) that block_diagonal and "
                  "fem draw from instead of their own (2/4/8 and 1..4)")
      ->delimiter(',');
  cmd->add_option("--seed", a->seed, "--generate: the seed")->capture_default_str();
  cmd->add_option("--max-rows", a->max_rows, "--generate: rows drawn from --min-rows..R")
      ->capture_default_str();
  cmd->add_option("--min-rows", a->min_rows, "--generate: the fewest rows drawn")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output, "The SFT JSONL (.gz compresses)")->required();
  cmd->add_option("--extend", a->extend,
                  "An earlier SFT JSONL: its samples are kept (written first to --output, which "
                  "may be the same file) and its matrices are not labelled again");
  cmd->add_option("--device", a->device, "gpu, cpu or auto")->capture_default_str();
  cmd->add_option("--workers", a->workers, "GPU worker processes")->capture_default_str();
  cmd->add_option("--op", a->op, "spmv or spmm")->capture_default_str();
  cmd->add_option("--k", a->build.k, "SpMM: columns of B")->capture_default_str();
  cmd->add_option("--val-fraction", a->build.val_fraction, "Share of matrices in the val split")
      ->capture_default_str();
  cmd->add_option("--label", a->label,
                  "auto (tune on a GPU, heuristic on the CPU), tune or heuristic")
      ->capture_default_str();
  cmd->add_flag("--no-verify", a->no_verify, "Heuristic labels: skip checking them on the device");
  // Not --max-nnz, which in training means the nonzeros the matrix embedding samples; that
  // spelling stays accepted here for scripts written before.
  cmd->add_option("--max-matrix-nnz,--max-nnz", a->build.max_nnz,
                  "Larger .mtx matrices are left out; larger generated ones are written as their "
                  "generator's recipe (\"generator\", no coordinates). --max-nnz: the old "
                  "spelling")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Matrices labelled at once (0: one per core)")
      ->capture_default_str();
  cmd->add_flag("--no-progress", a->no_progress, "No progress bar on stderr");
  cmd->callback([a] { run_build(*a); });
}

void add_retime(CLI::App& dataset) {
  auto a = std::make_shared<retime_args>();
  CLI::App* cmd = dataset.add_subcommand(
      "retime",
      "Timed labels brought up to date with the expert library: the candidates a label's "
      "ranking lacks (templates added since) are timed beside its recorded best, scaled to its "
      "recorded time and merged; the label becomes the fastest (GPU)");
  cmd->add_option("labels,--labels", a->labels, "SFT JSONL made on a GPU (with candidates)")
      ->required();
  cmd->add_option("-o,--output", a->output, "The updated SFT JSONL (may be the same file)");
  cmd->add_flag(
      "--dry-run", a->dry_run,
      "Only count the candidates each label lacks, by template (no GPU, nothing written)");
  cmd->add_option("--device", a->device, "gpu (the only one that times)")->capture_default_str();
  cmd->add_option("--workers", a->workers, "GPU worker processes")->capture_default_str();
  cmd->add_option("--threads", a->threads, "Matrices retimed at once (0: one per core)")
      ->capture_default_str();
  cmd->add_option("--time-limit", a->time_limit_s,
                  "Seconds after which no matrix is started (0: none); the rest are written as "
                  "they were, and a second run on the output goes on from there")
      ->capture_default_str();
  cmd->add_flag("--no-progress", a->no_progress, "No progress bar on stderr");
  cmd->callback([a] { run_retime(*a); });
}

struct refresh_args {
  std::string labels, output;
  int threads = 0;
};

void run_refresh(const refresh_args& a) {
  std::vector<train::sft_sample> samples = train::read_sft_jsonl(a.labels);
  const train::refresh_result r =
      train::refresh_label_code(samples, a.threads > 0 ? a.threads : train::hardware_threads());
  train::write_sft_jsonl(a.output, samples);
  std::printf(
      "wrote %s: %zu samples; %lld programs in today's text, %lld already were, %lld not in "
      "today's space and %lld without an expert line (left as they were)\n",
      a.output.c_str(), samples.size(), static_cast<long long>(r.refreshed),
      static_cast<long long>(r.unchanged), static_cast<long long>(r.not_found),
      static_cast<long long>(r.no_expert));
}

void add_refresh(CLI::App& dataset) {
  auto a = std::make_shared<refresh_args>();
  CLI::App* cmd = dataset.add_subcommand(
      "refresh",
      "Labels' program texts re-emitted from today's expert library (same template and "
      "parameters, the library's current text), so SFT teaches one text per program (no GPU)");
  cmd->add_option("labels,--labels", a->labels, "SFT JSONL")->required();
  cmd->add_option("-o,--output", a->output, "The updated SFT JSONL (may be the same file)")
      ->required();
  cmd->add_option("--threads", a->threads, "Matrices at once (0: one per core)")
      ->capture_default_str();
  cmd->callback([a] { run_refresh(*a); });
}

void add_corpus(CLI::App& dataset) {
  auto a = std::make_shared<corpus_args>();
  CLI::App* cmd = dataset.add_subcommand(
      "corpus",
      "Pre-training corpus (JSONL): the CUDA toolkit's device headers (CUB, Thrust, "
      "libcu++, cuda_fp16, ...) and the expert library's programs");
  cmd->add_option("-o,--output", a->output, "The corpus JSONL (.gz compresses)")->required();
  cmd->add_option("--cuda-root", a->corpus.cuda_root, "The CUDA toolkit")->capture_default_str();
  cmd->add_option("--max-bytes", a->corpus.max_bytes, "Cap on the total text")
      ->capture_default_str();
  cmd->add_option("--val-fraction", a->corpus.val_fraction, "Share of documents in the val split")
      ->capture_default_str();
  cmd->add_flag("--no-experts", a->no_experts, "Leave the expert programs out");
  cmd->add_flag("--no-toolkit", a->no_toolkit, "Leave the toolkit's headers out");
  cmd->callback([a] { run_corpus(*a); });
}

struct score_args {
  std::string labels, output;
  double tolerance = 0.1;
  int threads = 0;
};

void run_score(const score_args& a) {
  if (a.tolerance < 0) throw error("--tolerance must be >= 0");
  const std::vector<train::sft_sample> labels = train::read_sft_jsonl(a.labels);
  const int threads = a.threads > 0 ? a.threads : train::hardware_threads();
  const train::heuristic_score s = train::score_heuristic(labels, threads);
  if (s.labels.empty())
    throw error("dataset score-heuristic: " + a.labels +
                " has no label with timed candidates (labels made on a GPU have them)");
  std::printf("%s", train::format_table(s, a.tolerance).c_str());
  if (s.skipped)
    std::printf("(%lld labels without timed candidates left out)\n",
                static_cast<long long>(s.skipped));
  if (!a.output.empty()) {
    const std::string text = train::to_json(s, a.tolerance).dump(1) + "\n";
    atomic_file_writer out(a.output, false);
    out.write(text.data(), text.size());
    out.commit();
    std::printf("written: %s\n", a.output.c_str());
  }
}

void add_score_heuristic(CLI::App& dataset) {
  auto a = std::make_shared<score_args>();
  CLI::App* cmd = dataset.add_subcommand(
      "score-heuristic",
      "The feature heuristic's pick for each timed label's matrix, looked up in the label's "
      "ranking of measured candidates: how often it is within --tolerance of the fastest, by "
      "family and node order (no GPU needed)");
  cmd->add_option("labels,--labels", a->labels, "SFT JSONL made on a GPU (with candidates)")
      ->required();
  cmd->add_option("-o,--output", a->output, "Also write the per-label report as JSON");
  cmd->add_option("--tolerance", a->tolerance, "Within this fraction of the fastest counts")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Matrices remade at once (0: one per core)")
      ->capture_default_str();
  cmd->callback([a] { run_score(*a); });
}

}  // namespace

void add_dataset_command(CLI::App& app) {
  CLI::App& dataset =
      *app.add_subcommand("dataset", "Build the SFT data set and the pre-training corpus");
  dataset.require_subcommand(1);
  add_build(dataset);
  add_retime(dataset);
  add_refresh(dataset);
  add_corpus(dataset);
  add_score_heuristic(dataset);
}

}  // namespace sparserl::cli
