#pragma once
// How good a policy is on matrices it has not trained on: one greedy program per held-out matrix,
// judged by the harness. The quickstart reports it before and after PPO; the numbers are the
// ones the paper reports (compile rate, correct rate, geometric-mean speed-up vs cuSPARSE).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "model/sampling.h"
#include "train/policy.h"
#include "train/program_verdicts.h"
#include "train/sft_data.h"

namespace sparserl::train {

struct held_out_result {
  std::string name;  // the sample's name, or "sample N"
  std::string program;
  verdict judged;
};

struct held_out_report {
  std::vector<held_out_result> results;
  int64_t extracted = 0, compiled = 0, correct = 0;
  double mean_reward = 0;
  // Over the correct programs that were timed against cuSPARSE (GPU executor); empty otherwise.
  std::optional<double> geomean_speedup;
  int64_t timed = 0;

  int64_t size() const { return static_cast<int64_t>(results.size()); }
};

// A matrix and the operation a policy writes a kernel for.
struct eval_matrix {
  std::string name;  // names the matrix for the evaluator's caches too
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;
  const csr_matrix* matrix = nullptr;
};

// `per_matrix` programs for every matrix, sampled with `sampling` (temperature 0: greedy) in
// batches of about `batch` programs, each judged by the harness (through `verdicts` when given:
// a program already judged for that matrix keeps its verdict); out[i][j] is matrix i's program j.
std::vector<std::vector<held_out_result>> sample_and_judge(const policy& p,
                                                           const std::vector<eval_matrix>& matrices,
                                                           evaluator& judge, int64_t max_new_tokens,
                                                           const sampling_options& sampling,
                                                           int per_matrix, int batch = 8,
                                                           program_verdicts* verdicts = nullptr);

// Samples greedily (batches of `batch`) for every sample, judges each program, summarises.
held_out_report evaluate_held_out(const policy& p, const std::vector<sft_sample>& samples,
                                  evaluator& judge, int64_t max_new_tokens, int batch = 8);

// "compiled 3/4, correct 2/4, mean reward 0.61, geomean speed-up 1.12x over 2 timed".
std::string summary_line(const held_out_report& r);
nlohmann::json to_json(const held_out_report& r);

}  // namespace sparserl::train
