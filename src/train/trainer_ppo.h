#pragma once
// PPO for the kernel-writing policy (the SparseRL paper's third stage, after TRL's PPOTrainer):
// each step samples one program per task from the policy (matrix prefix + prompt), scores them
// with the evaluation harness (compile -> run -> verify -> time: the hierarchical reward) on a
// thread pool while the old log-probs, values and reference log-probs are computed, shapes the
// reward with the per-token KL to the reference policy (the same model with adapters off, or a
// frozen copy when all weights train), runs GAE and several epochs of clipped policy and value
// updates on mini-batches.
#include <cstdint>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "model/matrix_encoding.h"
#include "train/policy.h"
#include "train/ppo_math.h"
#include "train/trainer_options.h"

namespace sparserl::train {

struct ppo_task {
  std::string id;  // names the matrix for the evaluator's caches
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;
  csr_matrix matrix;
  matrix_encoding encoding;
};

// Defaults follow TRL's PPOConfig where it has one (documented in docs/training.md).
struct ppo_options {
  run_options run;
  optimizer_options optim;  // lr 1.41e-5 in TRL; tiny models from scratch want ~1e-4
  int64_t batch_size = 8;   // rollouts per step
  int64_t mini_batch = 4;
  int ppo_epochs = 4;
  int64_t max_new_tokens = 512;
  double temperature = 1.0;
  int top_k = 0;
  double top_p = 1.0;
  double kl_coef = 0.05;
  double target_kl = 0;  // > 0: adaptive KL controller (Ziegler et al.) towards this KL
  double kl_horizon = 10000;
  double gamma = 1.0, lam = 0.95;
  // Advantages are divided by max(std, this): 0.5, under the 1.0 between a wrong and a correct
  // program, so a batch that all scored alike gets a small update, not amplified noise.
  double advantage_std_floor = 0.5;
  ppo_clip_options clip;
  int reward_threads = 4;
};

struct ppo_step_stats {
  double reward_mean = 0, reward_std = 0;
  double compile_rate = 0, correct_rate = 0, extract_rate = 0;
  double mean_speedup = 0;  // over correct programs with a measured speed-up (0 if none)
  double kl = 0, entropy = 0, clip_fraction = 0, approx_kl = 0;
  double policy_loss = 0, value_loss = 0, kl_coef = 0;
  double tokens_per_s = 0, reward_evals_per_s = 0;
  double generation_s = 0, reward_s = 0, update_s = 0, response_tokens = 0;
};

struct ppo_result {
  std::vector<ppo_step_stats> steps;  // of this process
};

ppo_result train_ppo(policy& p, const std::vector<ppo_task>& tasks, evaluator& judge,
                     const ppo_options& options);

// A task for `matrix` (encoded by the policy's projector options).
ppo_task make_ppo_task(const policy& p, std::string id, csr_matrix matrix, sparse_op op, int32_t k);

}  // namespace sparserl::train
