#pragma once
// The whole `sparserl` command line as a function: main() calls it, and so does the Python package
// (python/), which runs the trainers in-process with the seed's argv.
namespace sparserl::cli {

// Parses argv (argv[0] is the program name) and runs the subcommand. Returns the exit status:
// 0 done, 1 a user error or a failed check (printed as one line to stderr), 2 an internal error;
// --help and --version print and return 0.
int run_command_line(int argc, char** argv);

}  // namespace sparserl::cli
