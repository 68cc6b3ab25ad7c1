#pragma once
// Each `sparserl <command>` lives in its own cmd_<name>.cpp and registers itself here.
#include <CLI/CLI.hpp>

namespace sparserl::cli {

void add_matrix_command(CLI::App& app);           // cmd_matrix.cpp: info, gen, convert
void add_eval_command(CLI::App& app);             // cmd_eval.cpp
void add_tune_command(CLI::App& app);             // cmd_tune.cpp
void add_bench_command(CLI::App& app);            // cmd_bench.cpp
void add_tokenizer_command(CLI::App& app);        // cmd_tokenizer.cpp: train, encode, decode
void add_serve_command(CLI::App& app);            // cmd_serve.cpp: the reward service
void add_dataset_command(CLI::App& app);          // cmd_dataset.cpp: build, corpus
void add_plot_command(CLI::App& app);             // cmd_plot.cpp
void add_train_commands(CLI::App& app);           // cmd_train.cpp: pretrain, train-sft, train-ppo
void add_generate_command(CLI::App& app);         // cmd_generate.cpp
void add_quickstart_command(CLI::App& app);       // cmd_quickstart.cpp
void add_evaluate_policy_command(CLI::App& app);  // cmd_evaluate_policy.cpp
void add_export_command(CLI::App& app);           // cmd_export.cpp

}  // namespace sparserl::cli
