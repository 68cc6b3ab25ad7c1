// sparserl eval: parse, compile, verify and time one program on one matrix; print the verdict.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/runner_choice.h"
#include "eval/evaluator.h"
#include "kernel/heuristic.h"
#include "sparse/error.h"
#include "sparse/features.h"

namespace sparserl::cli {

namespace {

struct eval_args {
  std::string matrix, program, op = "spmv", device = "auto", arch;  // arch "": the device's
  int k = 64, trials = 3;
  double timeout_s = 5;
  bool json = false;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(path + ": cannot open program file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void print_verdict(const verdict& v) {
  std::printf("%-16s %s\n", "result", v.correct ? "correct" : "FAILED");
  if (!v.failure.empty()) std::printf("%-16s %s\n", "failure", v.failure.c_str());
  std::printf("%-16s %s\n", "executor", v.executor.c_str());
  std::printf("%-16s extracted=%d compiled=%d ran=%d correct=%d\n", "stages", v.extracted,
              v.compiled, v.ran, v.correct);
  std::printf("%-16s %d (max error / tolerance %.3g)\n", "trials", v.trials, v.max_error_ratio);
  if (v.checked_timed_runs > 0)
    std::printf("%-16s %d verified against their own fresh input\n", "timed runs",
                v.checked_timed_runs);
  std::printf("%-16s %.1f ms\n", "compile", v.compile_ms);
  if (v.kernel_ms)
    std::printf("%-16s %.4f ms (%s)\n", "kernel", *v.kernel_ms, v.timing_method.c_str());
  if (v.achieved_gbps)
    std::printf("%-16s %.1f GB/s of %lld bytes\n", "bandwidth", *v.achieved_gbps,
                static_cast<long long>(v.bytes_moved));
  if (v.baseline_ms)
    std::printf("%-16s %.4f ms (%s, the fastest correct CSR algorithm)\n", "cuSPARSE",
                *v.baseline_ms, v.baseline_name.c_str());
  if (v.baseline_ms && !v.baseline_skipped.empty())
    std::printf("%-16s %s\n", "cuSPARSE skipped", v.baseline_skipped.c_str());
  if (v.speedup) std::printf("%-16s %.3fx\n", "speedup", *v.speedup);
  if (!v.kernel_ms && v.correct)
    std::printf("%-16s none (the CPU emulator checks correctness only)\n", "timing");
  std::printf("%-16s %.4f\n", "reward", v.reward);
}

void run_eval(const eval_args& a) {
  const std::optional<sparse_op> op = parse_op(a.op);
  if (!op) throw error("--op " + a.op + ": expected spmv or spmm");
  if (*op == sparse_op::spmm && (a.k < 1 || a.k > 4096)) throw error("--k must be in 1..4096");
  if (a.trials < 1) throw error("--trials must be at least 1");
  std::string matrix_id;
  const csr_matrix matrix = load_matrix_or_default(a.matrix, matrix_id);
  const std::string completion =
      a.program.empty() ? emit_program(pick_heuristic(*op, compute_features(matrix), a.k)).to_text()
                        : read_text(a.program);
  std::unique_ptr<program_runner> runner = make_runner(a.device);
  eval_options options;
  options.trials = a.trials;
  options.compile.arch = a.arch.empty() ? device_arch(*runner) : a.arch;
  options.limits.launch_timeout_s = a.timeout_s;
  evaluator eval(*runner, options);
  eval_task task{*op, &matrix, a.k, matrix_id};
  const verdict v = eval.evaluate(task, completion);
  if (a.json)
    std::cout << verdict_to_json(v).dump(2) << "\n";
  else
    print_verdict(v);
  if (!v.correct) throw CLI::RuntimeError(1);
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<eval_args>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Evaluate a kernel program on a matrix: parse, compile, verify, time vs cuSPARSE");
  cmd->add_option("--matrix", args->matrix,
                  "Matrix Market file (.mtx/.mtx.gz); default: an embedded 64x64-grid 2D stencil");
  cmd->add_option("--program", args->program,
                  "Program or raw completion text; default: the heuristic's expert program");
  cmd->add_option("--op", args->op, "spmv or spmm")->capture_default_str();
  cmd->add_option("--k", args->k, "SpMM: columns of the dense B")->capture_default_str();
  cmd->add_option("--device", args->device, "gpu, cpu (emulator) or auto")->capture_default_str();
  cmd->add_option("--trials", args->trials, "fresh random inputs to verify on")
      ->capture_default_str();
  cmd->add_option("--arch", args->arch,
                  "NVRTC --gpu-architecture (default: the GPU's, else sm_90)");
  cmd->add_option("--timeout", args->timeout_s, "seconds per trial before the run is killed")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print the verdict as JSON");
  cmd->callback([args] { run_eval(*args); });
}

}  // namespace sparserl::cli
