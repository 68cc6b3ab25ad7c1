// sparserl bench: the benchmark suite. For each generated matrix: cuSPARSE (its fastest correct
// CSR algorithm, named per matrix), the heuristic's pick
// and the autotuned best, all timed by the same protocol in one run, with the device's measured
// copy bandwidth as the roofline. Writes bench.csv and bench.json (after every matrix, so a run cut
// short keeps what it measured); tools/plot_bench.py draws them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/runner_choice.h"
#include "eval/autotune.h"
#include "eval/gpu_runner.h"
#include "kernel/heuristic.h"
#include "sparse/content_hash.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/generators.h"
#include "sparse/gzip_file.h"
#include "train/heuristic_score.h"

namespace sparserl::cli {

namespace {

struct bench_args {
  std::string suite = "classic", op = "spmv", device = "auto", out_dir = "bench-out";
  int32_t scale = 1;              // divides every suite matrix's rows (CPU smoke tests)
  std::vector<std::string> only;  // matrix names to run; empty = the whole suite
  int k = 64, workers = 1;
  std::string rescore;  // an earlier bench.json: the heuristic judged against its rankings
};

struct suite_matrix {
  std::string name;
  generator_spec spec;
};

suite_matrix entry(std::string name, std::string family, int32_t rows,
                   void (*tweak)(generator_spec&) = nullptr) {
  suite_matrix m{std::move(name), {}};
  m.spec.family = std::move(family);
  m.spec.rows = rows;
  m.spec.seed = 2026;
  if (tweak) tweak(m.spec);
  return m;
}

// "classic": every classic family at 10^6..3x10^7 nonzeros (working sets above the H200's 60 MB
// L2) plus two small ones that fit in it; "tiny": the same at toy sizes, for CPU checks.
std::vector<suite_matrix> classic_suite(int32_t s) {
  return {
      entry("stencil2d_5pt", "stencil2d", 4000000 / s),
      entry("stencil2d_9pt", "stencil2d", 2250000 / s, [](generator_spec& g) { g.points = 9; }),
      entry("stencil3d_7pt", "stencil3d", 2000000 / s, [](generator_spec& g) { g.points = 7; }),
      entry("stencil3d_27pt", "stencil3d", 1000000 / s, [](generator_spec& g) { g.points = 27; }),
      entry("banded_bw24", "banded", 600000 / s, [](generator_spec& g) { g.bandwidth = 24; }),
      entry("block_diag_8", "block_diagonal", 1000000 / s, [](generator_spec& g) { g.block = 8; }),
      entry("fem_block4", "fem", 1000000 / s, [](generator_spec& g) { g.block = 4; }),
      entry("random_d12", "random", 1000000 / s,
            [](generator_spec& g) { g.density = 12.0 / g.rows; }),
      entry("rmat_deg16", "rmat", 1048576 / s, [](generator_spec& g) { g.avg_degree = 16; }),
      entry("circuit", "circuit", 2000000 / s, [](generator_spec& g) { g.avg_degree = 5; }),
      entry("lp", "lp", 400000 / s, [](generator_spec& g) { g.avg_degree = 8; }),
      entry("small_stencil2d", "stencil2d", 100000 / s),
      entry("small_rmat", "rmat", 65536 / s, [](generator_spec& g) { g.avg_degree = 8; }),
  };
}

// "realistic": the graph families (docs/matrix-families.md) at 12..25M nonzeros (SpMV sizes),
// every family and every node order, 16 matrices.
std::vector<suite_matrix> realistic_suite(int32_t s) {
  auto graph = [s](std::string name, std::string family, int32_t rows, const char* order,
                   void (*tweak)(generator_spec&) = nullptr) {
    suite_matrix m = entry(std::move(name), std::move(family), std::max(64, rows / s), tweak);
    m.spec.order = order;
    return m;
  };
  auto dof3_2d = [](generator_spec& g) { g.dims = 2, g.dof = 3; };
  auto knn16 = [](generator_spec& g) { g.dims = 3, g.neighbors = 16; };
  auto power16 = [](generator_spec& g) { g.avg_degree = 16, g.exponent = 2.3; };
  return {
      graph("mesh2d_natural", "mesh2d", 1800000, "natural"),  // ~7/row
      graph("mesh2d_random", "mesh2d", 1800000, "random"),
      graph("mesh2d_rcm", "mesh2d", 1800000, "rcm"),
      graph("mesh3d_natural", "mesh3d", 1000000, "natural"),  // ~15/row
      graph("mesh3d_random", "mesh3d", 1000000, "random"),
      graph("fem2d_dof3_natural", "fem_mesh", 750000, "natural", dof3_2d),  // ~21/row
      graph("fem2d_dof3_random", "fem_mesh", 750000, "random", dof3_2d),
      graph("fem3d_dof3_rcm", "fem_mesh", 450000, "rcm",
            [](generator_spec& g) { g.dims = 3, g.dof = 3; }),  // ~45/row
      graph("fem2d_dof6_natural", "fem_mesh", 400000, "natural",
            [](generator_spec& g) { g.dims = 2, g.dof = 6; }),  // ~42/row
      graph("knn16_natural", "knn", 1000000, "natural", knn16),
      graph("knn16_random", "knn", 1000000, "random", knn16),
      graph("powerlaw_natural", "powerlaw", 1000000, "natural", power16),
      graph("powerlaw_random", "powerlaw", 1000000, "random", power16),
      graph("road_natural", "road", 4000000, "natural"),  // ~3.8/row
      graph("road_random", "road", 4000000, "random"),
      graph("road_rcm", "road", 4000000, "rcm"),
  };
}

// SpMM uses an eighth of the rows: with k = 64 the dense B and C alone are 2 x 256 bytes a row,
// so the working sets stay far above L2 while inputs and references stay affordable.
std::vector<suite_matrix> suite(const std::string& name, sparse_op op, int32_t scale) {
  if (scale < 1) throw error("--scale " + std::to_string(scale) + ": expected >= 1");
  const int32_t spmm = op == sparse_op::spmm ? 8 : 1;
  if (name == "classic" || name == "default") return classic_suite(scale * spmm);
  if (name == "tiny") return classic_suite(1000 * scale * spmm);
  if (name == "realistic") return realistic_suite(scale * spmm);
  throw error("--suite " + name + ": expected classic, realistic or tiny");
}

std::vector<suite_matrix> select(std::vector<suite_matrix> all,
                                 const std::vector<std::string>& only) {
  if (only.empty()) return all;
  std::vector<suite_matrix> picked;
  for (const std::string& name : only) {
    auto it =
        std::find_if(all.begin(), all.end(), [&](const suite_matrix& m) { return m.name == name; });
    if (it == all.end()) throw error("--only " + name + ": no such matrix in the suite");
    picked.push_back(*it);
  }
  return picked;
}

// cuSPARSE's fastest correct CSR algorithm for the matrix (SpMV CSR_ALG1/ALG2, SpMM CSR_ALG1/2/3,
// each verified against the CPU reference): the same baseline the evaluator's speed-ups use.
std::optional<baseline_result> reference_baseline(program_runner& runner, const eval_task& task) {
  std::optional<baseline_result> b =
      runner.baseline({task.op, task.matrix, task.k, csr_content_id(*task.matrix)});
  if (b && !b->ok) std::fprintf(stderr, "bench %s: %s\n", task.id.c_str(), b->failure.c_str());
  if (b && b->ok && !b->skipped.empty())
    std::fprintf(stderr, "bench %s: cuSPARSE skipped %s\n", task.id.c_str(), b->skipped.c_str());
  return b && b->ok ? b : std::nullopt;
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Every candidate's time (or why it failed), fastest first: where a family loses, and by how much.
nlohmann::json ranked_json(const tune_result& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const tuned_candidate& c : r.ranked) {
    nlohmann::json e = {{"program", c.config.describe()}, {"correct", c.result.correct}};
    if (c.result.correct) e["ms"] = optional_json(c.result.kernel_ms);
    if (c.result.achieved_gbps) e["gbps"] = *c.result.achieved_gbps;
    if (!c.result.correct) e["failure"] = c.result.failure;
    out.push_back(std::move(e));
  }
  return out;
}

// The candidates' time by phase, summed over the pool's threads (so it can exceed tune_wall_s):
// where a suite's minutes go.
nlohmann::json tune_phases_json(const tune_result& r) {
  double compile = 0, prepare = 0, run = 0, check = 0;
  for (const tuned_candidate& c : r.ranked) {
    compile += c.result.compile_ms / 1e3;
    prepare += c.result.prepare_ms / 1e3;
    run += c.result.run_ms / 1e3;
    check += c.result.check_ms / 1e3;
  }
  return {{"compile", compile}, {"prepare", prepare}, {"run", run}, {"check", check}};
}

nlohmann::json bench_one(program_runner& runner, const suite_matrix& m, const bench_args& a,
                         double peak) {
  const csr_matrix matrix = generate_matrix(m.spec);
  const sparse_op op = *parse_op(a.op);
  eval_options options;
  options.compile.arch = device_arch(runner);
  evaluator eval(runner, options);
  const eval_task task{op, &matrix, a.k, "bench:" + m.name};
  const std::optional<baseline_result> base = reference_baseline(runner, task);
  std::optional<double> cusparse_ms;
  if (base) cusparse_ms.emplace(base->ms);
  const tune_result r = autotune(eval, task, a.workers);
  const tuned_candidate* best = r.best();
  const int32_t width = op == sparse_op::spmm ? a.k : 1;
  const double min_bytes = 4.0 * (matrix.rows + 1 + 2 * matrix.nnz()) +
                           4.0 * width * (static_cast<double>(matrix.cols) + matrix.rows);
  nlohmann::json j = {{"matrix", m.name},
                      {"family", m.spec.family},
                      {"rows", matrix.rows},
                      {"cols", matrix.cols},
                      {"nnz", matrix.nnz()},
                      {"min_bytes", min_bytes},
                      {"candidates", r.ranked.size()},
                      {"correct", r.correct},
                      {"tune_wall_s", r.wall_s},
                      {"tune_phase_s", tune_phases_json(r)},
                      {"cusparse", base ? base->name : ""},
                      {"cusparse_algorithm", base ? base->algorithm : ""},
                      {"cusparse_skipped", base ? base->skipped : ""},
                      {"cusparse_ms", optional_json(cusparse_ms)},
                      {"heuristic", r.heuristic.describe()}};
  std::optional<double> heuristic_ms, best_ms;
  if (r.heuristic_rank && r.ranked[*r.heuristic_rank].result.correct)
    heuristic_ms = r.ranked[*r.heuristic_rank].result.kernel_ms;
  if (best) best_ms = best->result.kernel_ms;
  j["heuristic_ms"] = optional_json(heuristic_ms);
  j["best"] = best ? best->config.describe() : "";
  j["best_ms"] = optional_json(best_ms);
  auto ratio = [](const std::optional<double>& num, const std::optional<double>& den) {
    return num && den && *den > 0 ? std::optional<double>(*num / *den) : std::nullopt;
  };
  j["speedup_best"] = optional_json(ratio(cusparse_ms, best_ms));
  j["speedup_heuristic"] = optional_json(ratio(cusparse_ms, heuristic_ms));
  j["heuristic_vs_best"] = optional_json(ratio(heuristic_ms, best_ms));
  std::optional<double> roofline;
  if (best_ms && peak > 0) roofline = min_bytes / (*best_ms * 1e6) / peak;
  j["best_roofline_fraction"] = optional_json(roofline);
  // The same against the bytes the best program's own format moves (DIA/BSR can move fewer
  // than the CSR minimum, so the fraction above can pass 1).
  std::optional<double> own;
  if (best && best->result.achieved_gbps && peak > 0) own = *best->result.achieved_gbps / peak;
  j["best_format_roofline_fraction"] = optional_json(own);
  j["ranked"] = ranked_json(r);
  return j;
}

double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return v.empty() ? 0 : std::exp(s / v.size());
}

nlohmann::json summarize(const nlohmann::json& rows) {
  std::vector<double> best, heur;
  int near = 0, timed = 0;
  double worst = INFINITY;
  nlohmann::json baseline_wins = nlohmann::json::object();  // cuSPARSE algorithm -> matrices
  for (const auto& r : rows) {
    const std::string alg = r.value("cusparse_algorithm", "");
    if (!alg.empty()) baseline_wins[alg] = baseline_wins.value(alg, 0) + 1;
    if (r["speedup_best"].is_number()) {
      best.push_back(r["speedup_best"]);
      worst = std::min(worst, r["speedup_best"].get<double>());
    }
    if (r["speedup_heuristic"].is_number()) heur.push_back(r["speedup_heuristic"]);
    if (r["heuristic_vs_best"].is_number()) {
      ++timed;
      if (r["heuristic_vs_best"].get<double>() <= 1.10) ++near;
    }
  }
  return {{"geomean_speedup_best", geomean(best)},
          {"min_speedup_best", best.empty() ? 0 : worst},
          {"geomean_speedup_heuristic", geomean(heur)},
          {"heuristic_within_10pct", near},
          {"heuristic_timed", timed},
          {"cusparse_algorithm_wins", baseline_wins}};
}

void write_text(const std::string& path, const std::string& text) {
  atomic_file_writer out(path, false);
  out.write(text.data(), text.size());
  out.commit();
}

std::string csv(const nlohmann::json& rows) {
  const std::vector<std::string> cols = {"matrix",
                                         "family",
                                         "rows",
                                         "nnz",
                                         "min_bytes",
                                         "cusparse_ms",
                                         "cusparse_algorithm",
                                         "heuristic",
                                         "heuristic_ms",
                                         "best",
                                         "best_ms",
                                         "speedup_best",
                                         "speedup_heuristic",
                                         "best_roofline_fraction",
                                         "best_format_roofline_fraction"};
  std::string text;
  for (size_t i = 0; i < cols.size(); ++i) text += (i ? "," : "") + cols[i];
  text += "\n";
  for (const auto& r : rows) {
    for (size_t i = 0; i < cols.size(); ++i) {
      const auto& v = r[cols[i]];
      text += i ? "," : "";
      text += v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.is_null() ? "" : v.dump();
    }
    text += "\n";
  }
  return text;
}

// --rescore: today's heuristic pick for each suite matrix, looked up in an earlier run's ranking
// of every candidate (no GPU): what a change to the heuristic's rules does to a timed suite.
void run_rescore(const bench_args& a, const std::vector<suite_matrix>& matrices, sparse_op op) {
  nlohmann::json earlier;
  try {
    earlier = nlohmann::json::parse(read_file_decompressed(a.rescore, size_t{1} << 28));
  } catch (const nlohmann::json::exception& e) {
    throw error("--rescore " + a.rescore + ": not JSON (" + e.what() + ")");
  }
  if (!earlier.contains("matrices") || earlier.value("op", "") != a.op)
    throw error("--rescore " + a.rescore + ": not a bench.json of --op " + a.op);
  std::printf(
      "| matrix | earlier heuristic | heuristic now | now / fastest | earlier / fastest |\n"
      "|---|---|---|---|---|\n");
  std::vector<double> now_ratio, then_ratio;
  for (const suite_matrix& m : matrices) {
    auto row =
        std::find_if(earlier["matrices"].begin(), earlier["matrices"].end(),
                     [&](const nlohmann::json& r) { return r.value("matrix", "") == m.name; });
    if (row == earlier["matrices"].end()) continue;
    // The earlier run's ranking, then today's pick and that run's own looked up in it.
    std::vector<train::sft_candidate> ranked;
    for (const nlohmann::json& c : (*row)["ranked"])
      if (c.value("correct", false) && c["ms"].is_number())
        ranked.push_back({c.value("program", ""), c["ms"].get<double>(), std::nullopt, true});
    train::heuristic_rank now, then;
    now.heuristic_config =
        pick_heuristic(op, compute_features(generate_matrix(m.spec)), a.k).describe();
    then.heuristic_config = row->value("heuristic", "");
    auto cell = [&](train::heuristic_rank& r, std::vector<double>& all) {
      if (ranked.empty()) return std::string("not timed");
      train::rank_pick(ranked, r);
      if (!r.ratio) return std::string("not timed");
      all.push_back(*r.ratio);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3fx", *r.ratio);
      return std::string(buf);
    };
    const std::string now_cell = cell(now, now_ratio);
    const std::string then_cell = cell(then, then_ratio);
    std::printf(
        "| %s | %s | %s | %s | %s |\n", m.name.c_str(), then.heuristic_config.c_str(),
        now.heuristic_config == then.heuristic_config ? "same" : now.heuristic_config.c_str(),
        now_cell.c_str(), then_cell.c_str());
    std::fflush(stdout);
  }
  std::printf("geomean fastest / pick: now %.3fx over %zu, earlier %.3fx over %zu\n",
              geomean(now_ratio), now_ratio.size(), geomean(then_ratio), then_ratio.size());
}

void run_bench(const bench_args& a) {
  if (!parse_op(a.op)) throw error("--op " + a.op + ": expected spmv or spmm");
  const std::vector<suite_matrix> matrices =
      select(suite(a.suite, *parse_op(a.op), a.scale), a.only);
  if (!a.rescore.empty()) return run_rescore(a, matrices, *parse_op(a.op));
  // Before any work: a run of minutes must not end on an output directory it cannot write.
  std::error_code ec;
  std::filesystem::create_directories(a.out_dir, ec);
  if (ec || !std::filesystem::is_directory(a.out_dir))
    throw error("-o " + a.out_dir + ": cannot create the directory" +
                (ec ? ": " + ec.message() : std::string()));
  std::unique_ptr<program_runner> runner = make_runner(a.device, a.workers);
  double peak = 0;
  if (auto* gpu = dynamic_cast<gpu_runner*>(runner.get())) {
    const bandwidth_result b = gpu->copy_bandwidth();
    if (b.ok) peak = b.gbps;
  }
  nlohmann::json rows = nlohmann::json::array();
  // bench.json and bench.csv are rewritten after every matrix ("complete": false until the last),
  // so a run stopped by a time limit (scripts/gpu-bench.sh's SUITE_LIMIT_S) keeps what it measured.
  const auto write_outputs = [&](bool complete) {
    const nlohmann::json doc = {{"suite", a.suite},
                                {"op", a.op},
                                {"k", a.k},
                                {"executor", runner->name()},
                                {"peak_copy_gbps", peak},
                                {"complete", complete},
                                {"matrices", rows},
                                {"summary", summarize(rows)}};
    write_text(a.out_dir + "/bench.json", doc.dump(2) + "\n");
    write_text(a.out_dir + "/bench.csv", csv(rows));
    return doc["summary"];
  };
  for (const suite_matrix& m : matrices) {
    rows.push_back(bench_one(*runner, m, a, peak));
    const auto& r = rows.back();
    std::printf("%-16s nnz %10lld  cuSPARSE %-9s %-8s best %-9s (%s)  x%s\n", m.name.c_str(),
                r["nnz"].get<long long>(), r["cusparse_ms"].dump().c_str(),
                r["cusparse_algorithm"].get<std::string>().c_str(), r["best_ms"].dump().c_str(),
                r["best"].get<std::string>().c_str(), r["speedup_best"].dump().c_str());
    std::fflush(stdout);
    if (rows.size() < matrices.size()) write_outputs(false);
  }
  const nlohmann::json summary = write_outputs(true);
  std::printf("summary: %s\nwritten: %s/bench.json, %s/bench.csv\n", summary.dump().c_str(),
              a.out_dir.c_str(), a.out_dir.c_str());
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<bench_args>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Benchmark suite: cuSPARSE vs the heuristic pick vs the tuned best per matrix");
  cmd->add_option("--suite", args->suite,
                  "classic (GPU sizes; also 'default'), realistic (graph families, GPU sizes) or "
                  "tiny (classic at 1/1000)")
      ->capture_default_str();
  cmd->add_option("--scale", args->scale, "divide every matrix's rows by S (CPU smoke tests)")
      ->capture_default_str();
  cmd->add_option("--only", args->only, "run only these suite matrices (comma-separated)")
      ->delimiter(',');
  cmd->add_option("--op", args->op, "spmv or spmm")->capture_default_str();
  cmd->add_option("--k", args->k, "SpMM: columns of B")->capture_default_str();
  cmd->add_option("--device", args->device, "gpu, cpu or auto")->capture_default_str();
  cmd->add_option("--workers", args->workers, "GPU workers (and concurrent evaluations)")
      ->capture_default_str();
  cmd->add_option("-o,--out", args->out_dir,
                  "directory for bench.csv / bench.json (created if missing)")
      ->capture_default_str();
  cmd->add_option("--rescore", args->rescore,
                  "An earlier run's bench.json of this suite: today's heuristic pick per matrix "
                  "looked up in its ranking of every candidate, no GPU (a table; nothing "
                  "written)");
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace sparserl::cli
