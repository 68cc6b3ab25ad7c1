#pragma once
// The evaluation pipeline of one program on one task: parse -> screen -> compile (NVRTC) ->
// convert the matrix to the program's format -> run on poisoned outputs with fresh inputs for
// every trial -> verify every element -> time against cuSPARSE -> hierarchical reward.
// The same code judges every runner (GPU workers, CPU emulator), so no runner can be fooled
// differently. Thread-safe: trainers call evaluate() from several threads.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "eval/compiler.h"
#include "eval/reward.h"
#include "eval/runner.h"
#include "eval/verdict.h"
#include "eval/verify.h"
#include "kernel/abi.h"
#include "kernel/program.h"
#include "sparse/csr_matrix.h"

namespace sparserl {

struct eval_options {
  int trials = 3;  // fresh random x (or B) for each
  uint64_t seed = 0x5eed;
  bool measure_time = true;  // only runners that can measure do
  // Timed runs verified per program (the last one and a random choice of the others), >= 2.
  int checked_timed_runs = 3;
  double eps_factor = 8.0;  // tolerance scale, see eval/verify.h
  compile_options compile;
  run_limits limits;
  launch_limits launch;
  reward_config reward;
};

struct eval_task {
  sparse_op op = sparse_op::spmv;
  const csr_matrix* matrix = nullptr;
  int32_t k = 1;   // SpMM: columns of B
  std::string id;  // a label for logs; the caches key by the matrix's content, not by this
};

class evaluator {
 public:
  explicit evaluator(program_runner& runner, eval_options options = {});

  verdict evaluate(const eval_task& task, const std::string& completion);
  verdict evaluate_program(const eval_task& task, const kernel_program& program);

  const eval_options& options() const { return options_; }

 private:
  // `key` is task_key(task): the matrix's content hash, op and k.
  std::shared_ptr<const format_arguments> arguments_for(const eval_task& task,
                                                        const std::string& key,
                                                        const kernel_program& program,
                                                        std::string& data_id);
  // Inputs and references of every trial, made once per (task, op, k): every program on a task is
  // judged on the same fresh-per-trial inputs, and the CPU reference is not recomputed per program.
  struct trial_set {
    std::vector<std::vector<float>> inputs;
    std::vector<reference_output> references;
  };
  std::shared_ptr<const trial_set> trials_for(const eval_task& task, const std::string& key);
  std::optional<baseline_result> baseline_for(const eval_task& task, const std::string& key);
  void run_and_verify(const eval_task& task, const std::string& key, const kernel_program& program,
                      const compile_result& compiled, const std::string& device_source, verdict& v);
  // "" when every checked timed run is right for its own input, else the failure.
  std::string verify_timed_runs(const eval_task& task, const run_result& result, verdict& v) const;
  void finish(const eval_task& task, verdict& v) const;

  program_runner& runner_;
  eval_options options_;
  compile_cache compiled_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const format_arguments>> arguments_;
  std::map<std::string, std::optional<baseline_result>> baselines_;
  std::map<std::string, std::shared_ptr<const trial_set>> trial_sets_;
  std::atomic<uint64_t> evaluations_{0};  // mixed into the timed inputs' seed
};

// Bit pattern written into every output element before a run: a quiet NaN with a payload, so an
// unwritten element can never pass.
inline constexpr uint32_t output_poison_bits = 0x7fc0dead;

}  // namespace sparserl
