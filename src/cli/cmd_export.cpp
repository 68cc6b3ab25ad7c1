// sparserl export: a kernel program (a tuned best.cu, or the expert library's pick for a matrix)
// as a self-contained CUDA header that converts a host CSR matrix and launches the program
// (kernel/export_header.h); examples/export/ shows it in an application. Every check runs before
// the output is opened, so a refusal writes nothing.
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "eval/source_screen.h"
#include "kernel/completion.h"
#include "kernel/expert_library.h"
#include "kernel/export_header.h"
#include "kernel/format_registry.h"
#include "kernel/heuristic.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/matrix_market.h"

namespace sparserl::cli {

namespace {

struct export_args {
  std::string program, matrix, matrix_format, op = "spmv", output;
  int k = 64;
};

std::string read_program_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(path + ": cannot open program file");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string known_formats() {
  std::string out;
  for (const format_info& f : format_registry())
    out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

bool has_format_line(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 7, "FORMAT:") == 0) return true;
  }
  return false;
}

// The program file, parsed as the harness parses it. A file of LAUNCH lines and a kernel without
// a FORMAT line takes --matrix-format's; with both, they must agree.
kernel_program program_from_file(const export_args& a, sparse_op op,
                                 std::optional<format_kind> format) {
  std::string text = read_program_file(a.program);
  if (format && !has_format_line(text)) text = "FORMAT: " + a.matrix_format + "\n" + text;
  parse_result parsed = parse_completion(text, op);
  if (!parsed.program)
    throw error(a.program + ": not a " + op_name(op) + " program: " + parsed.error);
  if (format && parsed.program->format != *format)
    throw error(a.program + " is a " + format_name(parsed.program->format) +
                " program, not --matrix-format " + format_name(*format));
  return *parsed.program;
}

// The expert library's program for the matrix: the feature heuristic's pick, or with a format the
// first program of that format in the matrix's space (what `sparserl tune` would time first).
kernel_program program_for_matrix(const export_args& a, sparse_op op,
                                  std::optional<format_kind> format, std::string& origin) {
  const matrix_features f = compute_features(read_matrix_market(a.matrix));
  std::optional<expert_config> chosen;
  if (!format) {
    chosen = pick_heuristic(op, f, a.k);
  } else {
    for (const expert_config& c : expert_space(op, f, a.k))
      if (c.format == *format) {
        chosen = c;
        break;
      }
    if (!chosen)
      throw error("the expert library offers no " + std::string(format_name(*format)) + " " +
                  op_name(op) + " program for " + a.matrix +
                  " (its space for a matrix leaves out the formats that would not suit it; COO "
                  "and DIA have no SpMM programs); give --program");
  }
  origin = "the expert program " + chosen->describe() + " for " + a.matrix;
  // Through the text form, so the program is canonical exactly as a program file would be.
  parse_result parsed = parse_completion(emit_program(*chosen).to_text(), op);
  if (!parsed.program) throw error("expert program " + chosen->describe() + ": " + parsed.error);
  return *parsed.program;
}

void run_export(const export_args& a) {
  const std::optional<sparse_op> op = parse_op(a.op);
  if (!op) throw error("--op " + a.op + ": expected spmv or spmm");
  std::optional<format_kind> format;
  if (!a.matrix_format.empty()) {
    format = parse_format(a.matrix_format);
    if (!format)
      throw error("--matrix-format " + a.matrix_format +
                  ": unknown format (known: " + known_formats() + ")");
  }
  if (a.program.empty() == a.matrix.empty())
    throw error(
        "give --program FILE (a program to export) or --matrix FILE (the expert "
        "library's program for that matrix), one of them");
  if (*op == sparse_op::spmm && a.k < 1) throw error("--k must be at least 1");

  std::string origin = a.program;
  const kernel_program program = a.program.empty() ? program_for_matrix(a, *op, format, origin)
                                                   : program_from_file(a, *op, format);
  // The header runs the program in the application, outside the harness's sandbox: it must pass
  // the screen that every program the harness compiles passes.
  const screen_result screen = screen_device_source(program.source);
  if (!screen.ok) throw error(origin + ": the source screen refuses it: " + screen.reason);
  const std::string header = export_header(program, *op, origin);

  std::ofstream out(a.output, std::ios::binary | std::ios::trunc);
  if (!out) throw error(a.output + ": cannot write the header");
  out << header;
  out.close();
  if (!out) {
    std::remove(a.output.c_str());
    throw error(a.output + ": writing the header failed");
  }
  std::printf("wrote %s: %s %s program (%s) as class sparserl_export::%s\n", a.output.c_str(),
              op_name(*op), format_name(program.format), origin.c_str(),
              exported_class_name(*op).c_str());
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto a = std::make_shared<export_args>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write a kernel program as a self-contained CUDA header (device code, conversion from a "
      "host CSR matrix, launch) for an application; examples/export/ shows one");
  cmd->add_option("--program", a->program,
                  "Program file (FORMAT and LAUNCH lines and device code, e.g. tune's best.cu; "
                  "raw model output is read too)");
  cmd->add_option("--matrix", a->matrix,
                  "Instead of --program: export the expert library's program for this .mtx "
                  "(the heuristic's pick, or the first of --matrix-format)");
  cmd->add_option("--matrix-format", a->matrix_format,
                  "Storage format (" + known_formats() +
                      "): with --program the program's (checked; supplied when the file has no "
                      "FORMAT line), with --matrix the one to export");
  cmd->add_option("--op", a->op, "spmv or spmm")->capture_default_str();
  cmd->add_option("--k", a->k, "--matrix with SpMM: the columns of B the program is chosen for")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output, "The header to write (e.g. spmv_kernel.cuh)")
      ->required();
  cmd->callback([a] { run_export(*a); });
}

}  // namespace sparserl::cli
