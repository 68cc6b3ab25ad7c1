#pragma once
// Each `sparserl <command>` lives in its own cmd_<name>.cpp and registers itself here.
#include <CLI/CLI.hpp>

namespace sparserl::cli {

void add_matrix_command(CLI::App& app);     // cmd_matrix.cpp: info, gen, convert
void add_eval_command(CLI::App& app);       // cmd_eval.cpp
void add_tune_command(CLI::App& app);       // cmd_tune.cpp
void add_bench_command(CLI::App& app);      // cmd_bench.cpp
void add_tokenizer_command(CLI::App& app);  // cmd_tokenizer.cpp: train, encode, decode

}  // namespace sparserl::cli
