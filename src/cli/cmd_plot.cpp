// `sparserl plot RUN_DIR`: PNG curves of every metric in RUN_DIR/metrics.jsonl, drawn into
// RUN_DIR/plots/ by tools/plot_run.py (matplotlib).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/python_tool.h"
#include "sparse/error.h"
#include "train/metrics_log.h"

namespace sparserl::cli {

namespace fs = std::filesystem;

namespace {

struct plot_args {
  std::string run_dir, output;
};

void run_plot(const plot_args& a) {
  std::error_code ec;
  if (!fs::is_directory(a.run_dir, ec)) throw error(a.run_dir + ": not a directory");
  const std::string metrics = (fs::path(a.run_dir) / "metrics.jsonl").string();
  if (!fs::exists(metrics, ec)) throw error(metrics + ": not found (no metrics logged yet?)");
  if (train::read_metrics(metrics).empty()) throw error(metrics + ": no metrics logged yet");
  // Absolute paths: the child starts in a fresh empty directory.
  const fs::path run_dir = fs::absolute(a.run_dir);
  const fs::path output = a.output.empty() ? run_dir / "plots" : fs::absolute(a.output);
  const std::string tool = find_python_tool("plot_run.py");
  const std::string python = find_python();
  const sandbox_result r = run_python(python, {tool, run_dir.string(), output.string()}, 600);
  if (r.exit_code != 0) {
    const std::string why = last_line(r.err);
    throw error("plot: " + tool + " " + (why.empty() ? r.describe(600) : why));
  }
  std::fwrite(r.out.data(), 1, r.out.size(), stdout);
}

}  // namespace

void add_plot_command(CLI::App& app) {
  auto a = std::make_shared<plot_args>();
  CLI::App* cmd = app.add_subcommand(
      "plot", "Draw every metric of RUN_DIR/metrics.jsonl as PNG curves into RUN_DIR/plots/");
  cmd->add_option("run_dir", a->run_dir, "The training run's directory")->required();
  cmd->add_option("-o,--output", a->output, "Where the PNGs go (default RUN_DIR/plots)");
  cmd->callback([a] { run_plot(*a); });
}

}  // namespace sparserl::cli
