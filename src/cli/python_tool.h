#pragma once
// Running this repository's Python drawing scripts (tools/*.py, matplotlib) from the CLI:
// `sparserl plot` and `sparserl evaluate-policy` draw their PNGs this way.
#include <string>
#include <vector>

#include "eval/sandbox.h"

namespace sparserl::cli {

// tools/<name>: in the source tree this binary was built from, else beside the binary (an
// installed layout: bin/<name> or share/sparserl/<name>). Throws sparserl::error when absent.
std::string find_python_tool(const std::string& name);

// The first python3 that imports matplotlib: $SPARSERL_PYTHON alone when set, else python3 on
// PATH, then /usr/bin/python3. Throws sparserl::error saying what to install when none does.
std::string find_python();

// Runs `python args...` (our own trusted script: run_sandboxed is only the spawner, every
// protection off, the caller's environment passed through) with a wall-clock limit.
sandbox_result run_python(const std::string& python, const std::vector<std::string>& args,
                          double timeout_s);

// The last line of a script's stderr (its error message).
std::string last_line(std::string text);

}  // namespace sparserl::cli
