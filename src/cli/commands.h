#pragma once
// Each `sparserl <command>` lives in its own cmd_<name>.cpp and registers itself here.
#include <CLI/CLI.hpp>

namespace sparserl::cli {

void add_matrix_command(CLI::App& app);  // cmd_matrix.cpp: info, gen, convert
void add_eval_command(CLI::App& app);    // cmd_eval.cpp

}  // namespace sparserl::cli
