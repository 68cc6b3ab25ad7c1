#include "cli/python_tool.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "sparse/error.h"

namespace sparserl::cli {

namespace fs = std::filesystem;

// The script: in the source tree this binary was built from, else beside the binary (an
// installed layout: bin/plot_run.py or share/sparserl/plot_run.py).
std::string find_python_tool(const std::string& name) {
  std::vector<fs::path> places = {fs::path(SPARSERL_TOOLS_DIR) / name};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    places.push_back(exe.parent_path() / name);
    places.push_back(exe.parent_path().parent_path() / "share" / "sparserl" / name);
  }
  std::string tried;
  for (const fs::path& p : places) {
    if (fs::is_regular_file(p, ec)) return p.string();
    tried += (tried.empty() ? "" : ", ") + p.string();
  }
  throw error("tools/" + name + " not found (looked at " + tried + ")");
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
  if (tried.empty()) throw error("python3 not found (install python3 and python3-matplotlib)");
  throw error("no python3 with matplotlib (tried " + tried +
              "; apt-get install python3-matplotlib, or set SPARSERL_PYTHON)");
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text.substr(text.rfind('\n') + 1);  // npos + 1 == 0: the whole text
}

}  // namespace sparserl::cli
