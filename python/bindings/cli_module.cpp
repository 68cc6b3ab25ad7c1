// sparserl._cli: the `sparserl` command line in-process (cli/app.h), so `python -m sparserl ...`,
// sparserl.train_sft and sparserl.train_minimal run the C++ commands, trainers included, in the
// Python process. It links LibTorch (Debian's); python/sparserl/cli.py imports it only there.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "cli/app.h"

namespace nb = nanobind;

namespace {

// argv without the program name; returns the exit status (0 ok, 1 user error, 2 internal).
int run(const std::vector<std::string>& args) {
  std::vector<std::string> owned = {"sparserl"};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  return sparserl::cli::run_command_line(static_cast<int>(owned.size()), argv.data());
}

}  // namespace

NB_MODULE(_cli, m) {
  m.doc() = "the sparserl command line, in-process";
  // Training runs for minutes without touching Python objects: other Python threads go on.
  m.def("run", &run, nb::arg("args"), nb::call_guard<nb::gil_scoped_release>(),
        "Runs `sparserl ARGS...` and returns its exit status");
}
