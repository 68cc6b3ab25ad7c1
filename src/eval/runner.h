#pragma once
// A program runner executes a compiled program's launches in some sandbox (a GPU worker process,
// or the CPU emulator's child process) and hands back raw outputs. It judges nothing: the
// evaluator (eval/evaluator.h) poisons, verifies and scores, the same for every runner.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel/abi.h"
#include "kernel/program.h"
#include "sparse/csr_matrix.h"

namespace sparserl {

struct run_limits {
  double launch_timeout_s = 5.0;  // wall clock per trial (all launches)
  int64_t memory_bytes = int64_t{4} << 30;
  int64_t max_log_bytes = 64 * 1024;
};

struct run_request {
  sparse_op op = sparse_op::spmv;
  int32_t rows = 0, cols = 0, k = 1;
  const kernel_program* program = nullptr;
  const format_arguments* args = nullptr;    // built once per (matrix, format, params)
  std::string data_id;                       // names *args: same id = same arrays, so a
                                             // runner may keep them uploaded between runs
  std::vector<launch_geometry> geometry;     // one per entry point, in launch order
  std::vector<std::string> entries;          // entry point names, in launch order
  std::string device_source;                 // parameter defines + program source
  const std::vector<char>* cubin = nullptr;  // NVRTC's image of device_source (GPU runners)
  std::vector<std::vector<float>> inputs;    // one x (or B) per trial
  float poison = 0;                          // bit pattern written into outputs before a run
  bool measure_time = false;                 // GPU only
  // Timed runs (GPU): each computes on a fresh input the runner generates from this seed outside
  // the timed region; the runner returns input and output of this many of them, the last one and
  // a random choice of the others, for the evaluator to verify.
  uint64_t timed_input_seed = 0;
  int32_t checked_timed_runs = 3;
};

struct trial_result {
  std::vector<float> output;     // y (or C) after the run
  bool input_unchanged = true;   // the input buffer compared bitwise after the run
  bool format_unchanged = true;  // the format arrays compared after the run
};

// One timed run kept for verification: its input as generated, its output, and whether the
// program's input buffer still held that input afterwards.
struct timed_run_check {
  int32_t run = 0;  // 1-based, over warm-up and timed runs in order
  std::vector<float> input;
  std::vector<float> output;
  bool input_unchanged = true;
};

struct run_result {
  bool ok = false;
  std::string failure;  // "timeout after 5 s", "CUDA_ERROR_ILLEGAL_ADDRESS", ...
  std::string log;      // runner output (emulator compile log, worker stderr)
  std::vector<trial_result> trials;
  std::optional<double> kernel_ms;            // median over timed repetitions when measure_time
  std::string timing_method;                  // how kernel_ms was measured
  std::vector<timed_run_check> checked_runs;  // with kernel_ms: the timed runs to verify
};

// cuSPARSE on the task's CSR matrix, timed by the same protocol as the programs.
struct baseline_request {
  sparse_op op = sparse_op::spmv;
  const csr_matrix* matrix = nullptr;
  int32_t k = 1;
  std::string data_id;  // names the matrix, for upload caching
};
struct baseline_result {
  bool ok = false;
  std::string failure;
  std::string name;       // the fastest correct algorithm, e.g. "cusparseSpMM CSR_ALG2"
  std::string algorithm;  // its algorithm alone, e.g. "CSR_ALG2"
  double ms = 0;          // median
  std::string timing_method;
  std::string skipped;  // "cusparseSpMM CSR_ALG3: CUSPARSE_STATUS_NOT_SUPPORTED ...; ..." or ""
};

class program_runner {
 public:
  virtual ~program_runner() = default;
  virtual const char* name() const = 0;  // "gpu", "cpu"
  virtual run_result run(const run_request& request, const run_limits& limits) = 0;
  // Runners that can time cuSPARSE override this; the default has no baseline.
  virtual std::optional<baseline_result> baseline(const baseline_request&) { return std::nullopt; }
};

}  // namespace sparserl
