#pragma once
// `sparserl evaluate-policy`: how a policy does per matrix against the alternatives. For every
// matrix: K sampled programs (compile and correct rate, the best correct one's speed-up: best of
// K), the greedy program's verdict and speed-up over cuSPARSE, and beside them the speed-ups of
// the feature heuristic's pick (kernel/heuristic.h) and of the autotuner's best
// (eval/autotune.h). Speed-ups need a timing executor (the GPU); on the CPU emulator they are
// absent (null).
//
// Geometric means: over every matrix, a matrix whose program is not correct (or, for best of K,
// none of whose samples is) counting 1.0x, since the library's kernel would run instead; null when
// the column has no timed program at all.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "model/sampling.h"
#include "train/policy.h"
#include "train/policy_eval.h"

namespace sparserl::train {

// The heuristic's and the tuned best's outcome on one matrix, measured once and reused when
// several policies (checkpoints, seeds) are judged on the same matrices.
struct matrix_baselines {
  std::optional<double> heuristic_speedup, tuned_speedup;
  std::optional<bool> heuristic_correct;
  std::string heuristic_config, tuned_config;
  bool tuned = false;  // the tuned columns were measured (not skipped)
};

// From an earlier evaluate_policy.json: each matrix's baselines by its content id
// ("matrix_id", sparse/content_hash.h), so a renamed or changed file is never matched.
std::map<std::string, matrix_baselines> baselines_from_json(const nlohmann::json& evaluation);

struct policy_evaluation_options {
  int64_t max_new_tokens = 1024;
  int samples = 4;                             // K sampled programs per matrix
  sampling_options sampling{0.7, 0, 0.95, 0};  // for the K samples (the greedy one is argmax)
  int batch = 8;                               // programs generated at once
  bool heuristic = true;                       // judge the heuristic's pick
  bool tune = true;  // autotune each matrix (only where the executor times: the GPU)
  int tune_threads = 1;
  std::string executor = "cpu";  // the judge's runner: speed-ups (and tuning) only on "gpu"
  // Baselines measured before, by matrix content id: a matrix found here is not tuned again (its
  // tuned best's program and the heuristic's pick are still timed in this run).
  std::map<std::string, matrix_baselines> baselines;
};

struct matrix_evaluation {
  std::string name;
  std::string matrix_id;  // csr_content_id of the matrix
  int64_t rows = 0, cols = 0, nnz = 0;
  held_out_result greedy;
  std::vector<held_out_result> samples;
  int64_t compiled = 0, correct = 0;  // of the samples
  std::optional<double> greedy_speedup, best_of_k_speedup;
  matrix_baselines baselines;
  // The tuning search taken from policy_evaluation_options::baselines.
  bool baselines_reused = false;
  // The tuned best's program timed in this run (false: not timing, or no longer in the tuning
  // space, and the speed-up is the earlier one).
  bool tuned_retimed = false;
};

struct policy_evaluation {
  std::vector<matrix_evaluation> matrices;
  int samples_per_matrix = 0;
  int64_t samples = 0, compiled = 0, correct = 0;  // over every sample of every matrix
  int64_t greedy_compiled = 0, greedy_correct = 0;
  int64_t baselines_reused = 0;  // matrices whose baselines came from an earlier evaluation
  // Programs not judged again: one already judged for that matrix (program_verdicts.h).
  int64_t verdicts_shared = 0;
  std::optional<double> geomean_greedy, geomean_best_of_k, geomean_heuristic, geomean_tuned;
  std::string executor;
};

policy_evaluation evaluate_policy(const policy& p, const std::vector<eval_matrix>& matrices,
                                  evaluator& judge, const policy_evaluation_options& options);

nlohmann::json to_json(const policy_evaluation& e);
// A table: one line per matrix, then the summary; "-" where a speed-up is absent.
std::string format_table(const policy_evaluation& e);

}  // namespace sparserl::train
