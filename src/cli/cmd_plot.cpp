// `sparserl plot RUN_DIR`: PNG curves of every metric in RUN_DIR/metrics.jsonl, drawn into
// RUN_DIR/plots/ by tools/plot_run.py (matplotlib).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "eval/sandbox.h"
#include "sparse/error.h"
#include "train/metrics_log.h"

namespace sparserl::cli {

namespace fs = std::filesystem;

namespace {

struct plot_args {
  std::string run_dir, output;
};

// The script: in the source tree this binary was built from, else beside the binary (an
// installed layout: bin/plot_run.py or share/sparserl/plot_run.py).
std::string find_plot_tool() {
  std::vector<fs::path> places = {fs::path(SPARSERL_TOOLS_DIR) / "plot_run.py"};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    places.push_back(exe.parent_path() / "plot_run.py");
    places.push_back(exe.parent_path().parent_path() / "share" / "sparserl" / "plot_run.py");
  }
  std::string tried;
  for (const fs::path& p : places) {
    if (fs::is_regular_file(p, ec)) return p.string();
    tried += (tried.empty() ? "" : ", ") + p.string();
  }
  throw error("plot: tools/plot_run.py not found (looked at " + tried + ")");
}

// The child runs trusted code of ours, so run_sandboxed is only the spawner here (pipes,
// deadline, reaping): every protection is off and the caller's environment passes through.
sandbox_result run_python(const std::string& python, const std::vector<std::string>& args,
                          double timeout_s) {
  sandbox_options o;
  o.wall_timeout_s = timeout_s;
  o.address_space_bytes = 0;
  o.file_size_bytes = int64_t{1} << 30;
  o.open_files = 1024;
  o.processes = -1;
  o.isolate_network = false;
  o.drop_privileges = false;
  for (char** e = environ; *e; ++e) o.env.emplace_back(*e);
  std::vector<std::string> argv = {python};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_sandboxed(argv, {}, o);
}

// The first python3 that imports matplotlib: $SPARSERL_PYTHON alone when set, else python3 on
// PATH (a pyenv or venv one may lack it), then the system's /usr/bin/python3 (where
// apt-get install python3-matplotlib puts it).
std::string find_python() {
  std::vector<std::string> candidates;
  if (const char* forced = std::getenv("SPARSERL_PYTHON"); forced && *forced) {
    candidates.push_back(forced);
  } else {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "";
    for (size_t pos = 0; pos <= dirs.size();) {
      const size_t end = std::min(dirs.find(':', pos), dirs.size());
      const fs::path p = fs::path(dirs.substr(pos, end - pos)) / "python3";
      if (end > pos && ::access(p.c_str(), X_OK) == 0) {
        candidates.push_back(p.string());
        break;
      }
      pos = end + 1;
    }
    candidates.push_back("/usr/bin/python3");
  }
  std::string tried;
  for (const std::string& python : candidates) {
    if (::access(python.c_str(), X_OK) != 0) continue;
    const sandbox_result r = run_python(python, {"-c", "import matplotlib"}, 60);
    if (r.exit_code == 0) return python;
    tried += (tried.empty() ? "" : ", ") + python;
  }
  if (tried.empty())
    throw error("plot: python3 not found (install python3 and python3-matplotlib)");
  throw error("plot: no python3 with matplotlib (tried " + tried +
              "; apt-get install python3-matplotlib, or set SPARSERL_PYTHON)");
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text.substr(text.rfind('\n') + 1);  // npos + 1 == 0: the whole text
}

void run_plot(const plot_args& a) {
  std::error_code ec;
  if (!fs::is_directory(a.run_dir, ec)) throw error(a.run_dir + ": not a directory");
  const std::string metrics = (fs::path(a.run_dir) / "metrics.jsonl").string();
  if (!fs::exists(metrics, ec)) throw error(metrics + ": not found (no metrics logged yet?)");
  if (train::read_metrics(metrics).empty()) throw error(metrics + ": no metrics logged yet");
  // Absolute paths: the child starts in a fresh empty directory.
  const fs::path run_dir = fs::absolute(a.run_dir);
  const fs::path output = a.output.empty() ? run_dir / "plots" : fs::absolute(a.output);
  const std::string tool = find_plot_tool();
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
