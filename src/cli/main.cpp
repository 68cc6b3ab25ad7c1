// sparserl: trains a code LLM to write sparse CUDA kernels. See README.md.
#include "cli/app.h"

int main(int argc, char** argv) { return sparserl::cli::run_command_line(argc, argv); }
