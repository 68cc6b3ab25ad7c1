// sparserl tune: evaluate the expert library's candidates for a matrix, print them ranked, save
// the best program.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/runner_choice.h"
#include "eval/autotune.h"
#include "eval/gpu_runner.h"
#include "sparse/error.h"
#include "sparse/gzip_file.h"

namespace sparserl::cli {

namespace {

struct tune_args {
  std::string matrix, op = "spmv", device = "auto", output = "best.cu";
  int k = 64, workers = 1, threads = 1, top = 20;
  bool json = false;
};

// The measured copy bandwidth (GB/s, read + write), the roofline; 0 without a GPU.
double peak_gbps(program_runner& runner) {
  auto* gpu = dynamic_cast<gpu_runner*>(&runner);
  if (!gpu) return 0;
  const bandwidth_result b = gpu->copy_bandwidth();
  return b.ok ? b.gbps : 0;
}

nlohmann::json candidate_json(const tuned_candidate& c) {
  nlohmann::json j = verdict_to_json(c.result);
  j.erase("compile_log");
  j["program"] = c.config.describe();
  return j;
}

// The cuSPARSE algorithm the speed-ups are against (the fastest correct one for the matrix),
// from the first candidate that was timed against it.
const verdict* baseline_source(const tune_result& r) {
  for (const tuned_candidate& c : r.ranked)
    if (c.result.baseline_ms) return &c.result;
  return nullptr;
}

void print_table(const tune_result& r, double peak, int top) {
  if (const verdict* b = baseline_source(r)) {
    std::printf("cuSPARSE baseline: %s, %.4f ms (fastest correct CSR algorithm)\n",
                b->baseline_name.c_str(), *b->baseline_ms);
    if (!b->baseline_skipped.empty())
      std::printf("cuSPARSE skipped: %s\n", b->baseline_skipped.c_str());
  }
  std::printf("%-4s %-58s %10s %8s %7s %8s  %s\n", "rank", "program", "time ms", "GB/s", "%peak",
              "vs cuSP", "status");
  for (size_t i = 0; i < r.ranked.size() && static_cast<int>(i) < top; ++i) {
    const tuned_candidate& c = r.ranked[i];
    const verdict& v = c.result;
    auto num = [](const std::optional<double>& x, const char* fmt) {
      char buf[32];
      if (!x) return std::string("-");
      std::snprintf(buf, sizeof buf, fmt, *x);
      return std::string(buf);
    };
    std::optional<double> pct;
    if (v.achieved_gbps && peak > 0) pct = 100 * *v.achieved_gbps / peak;
    const bool heuristic = r.heuristic_rank && *r.heuristic_rank == i;
    std::printf("%-4zu %-58.58s %10s %8s %7s %8s  %s%s\n", i + 1, c.config.describe().c_str(),
                num(v.kernel_ms, "%.4f").c_str(), num(v.achieved_gbps, "%.0f").c_str(),
                num(pct, "%.0f%%").c_str(), num(v.speedup, "%.2fx").c_str(),
                v.correct ? "correct" : v.failure.substr(0, 60).c_str(),
                heuristic ? " [heuristic]" : "");
  }
}

void run_tune(const tune_args& a) {
  const std::optional<sparse_op> op = parse_op(a.op);
  if (!op) throw error("--op " + a.op + ": expected spmv or spmm");
  std::string id;
  const csr_matrix matrix = load_matrix_or_default(a.matrix, id);
  std::unique_ptr<program_runner> runner = make_runner(a.device, a.workers);
  eval_options options;
  options.compile.arch = device_arch(*runner);
  evaluator eval(*runner, options);
  const eval_task task{*op, &matrix, a.k, id};
  const tune_result r = autotune(eval, task, a.threads);
  const double peak = peak_gbps(*runner);
  const tuned_candidate* best = r.best();
  if (best) {
    atomic_file_writer out(a.output, false);
    const std::string text = best->program.to_text();
    out.write(text.data(), text.size());
    out.commit();
  }
  if (a.json) {
    nlohmann::json j = {{"matrix", id},
                        {"op", a.op},
                        {"executor", runner->name()},
                        {"peak_gbps", peak},
                        {"wall_s", r.wall_s},
                        {"correct", r.correct},
                        {"heuristic", r.heuristic.describe()},
                        {"candidates", nlohmann::json::array()}};
    const verdict* b = baseline_source(r);
    j["baseline_algorithm"] = b ? b->baseline_algorithm : "";
    j["baseline_ms"] = b ? nlohmann::json(*b->baseline_ms) : nlohmann::json(nullptr);
    for (const tuned_candidate& c : r.ranked) j["candidates"].push_back(candidate_json(c));
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf(
        "%s: %s on %s, %zu candidates, %d correct, %.1f s%s\n", id.c_str(), a.op.c_str(),
        runner->name(), r.ranked.size(), r.correct, r.wall_s,
        peak > 0
            ? (", peak copy bandwidth " + std::to_string(static_cast<int>(peak)) + " GB/s").c_str()
            : "");
    print_table(r, peak, a.top);
    // Without timing (the CPU emulator) nothing is ranked by speed: say what was written.
    if (best)
      std::printf("%s written to %s\n",
                  best->result.kernel_ms ? "best program" : "first correct program (not timed)",
                  a.output.c_str());
  }
  if (!best) throw error("no candidate was correct for " + id);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<tune_args>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Autotune: evaluate the expert kernel library on a matrix, rank, save the best");
  cmd->add_option("--matrix", args->matrix, "Matrix Market file; default: the embedded stencil");
  cmd->add_option("--op", args->op, "spmv or spmm")->capture_default_str();
  cmd->add_option("--k", args->k, "SpMM: columns of B")->capture_default_str();
  cmd->add_option("--device", args->device, "gpu, cpu or auto")->capture_default_str();
  cmd->add_option("--workers", args->workers, "GPU worker processes")->capture_default_str();
  cmd->add_option("--threads", args->threads, "concurrent evaluations")->capture_default_str();
  cmd->add_option("--top", args->top, "rows of the table")->capture_default_str();
  cmd->add_option("-o,--output", args->output, "where the best program is written")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print the ranking as JSON");
  cmd->callback([args] { run_tune(*args); });
}

}  // namespace sparserl::cli
