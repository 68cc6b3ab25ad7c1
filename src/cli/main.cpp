// sparserl: trains a code LLM to write sparse CUDA kernels. See README.md.
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "sparse/error.h"

int main(int argc, char** argv) {
  CLI::App app{"sparserl: sparse CUDA kernels from a code LLM trained with SFT and PPO",
               "sparserl"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sparserl 0.1.0");
  sparserl::cli::add_matrix_command(app);
  sparserl::cli::add_eval_command(app);
  sparserl::cli::add_tune_command(app);
  sparserl::cli::add_bench_command(app);
  sparserl::cli::add_tokenizer_command(app);
#ifdef SPARSERL_WITH_SERVE
  sparserl::cli::add_serve_command(app);
#endif
  sparserl::cli::add_dataset_command(app);
  sparserl::cli::add_plot_command(app);
  sparserl::cli::add_train_commands(app);
  sparserl::cli::add_generate_command(app);
  sparserl::cli::add_quickstart_command(app);
  sparserl::cli::add_evaluate_policy_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const sparserl::error& e) {
    std::fprintf(stderr, "sparserl: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sparserl: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
