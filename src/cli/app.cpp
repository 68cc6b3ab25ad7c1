#include "cli/app.h"

#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "sparse/error.h"

namespace sparserl::cli {

int run_command_line(int argc, char** argv) {
  CLI::App app{"sparserl: sparse CUDA kernels from a code LLM trained with SFT and PPO",
               "sparserl"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sparserl 0.1.0");
  add_matrix_command(app);
  add_eval_command(app);
  add_tune_command(app);
  add_bench_command(app);
  add_tokenizer_command(app);
#ifdef SPARSERL_WITH_SERVE
  add_serve_command(app);
#endif
  add_dataset_command(app);
  add_plot_command(app);
  add_train_commands(app);
  add_generate_command(app);
  add_quickstart_command(app);
  add_evaluate_policy_command(app);
  add_export_command(app);
  int status = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::Error& e) {
    status = app.exit(e);
  } catch (const sparserl::error& e) {
    std::fprintf(stderr, "sparserl: error: %s\n", e.what());
    status = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sparserl: internal error: %s\n", e.what());
    status = 2;
  }
  // A caller that goes on (the Python package) sees everything printed so far in order.
  std::fflush(stdout);
  std::fflush(stderr);
  return status;
}

}  // namespace sparserl::cli
