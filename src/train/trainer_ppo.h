#pragma once
// PPO for the kernel-writing policy (the SparseRL paper's third stage, after TRL's PPOTrainer):
// each step samples G programs per task from the policy (matrix prefix + prompt), scores them
// with the evaluation harness (compile -> run -> verify -> time: the hierarchical reward) on a
// thread pool while the old log-probs, values and reference log-probs are computed, turns scores
// and the KL to the reference policy (the same model with adapters off, or a frozen copy when
// all weights train) into advantages with the chosen estimator (GAE with the value head, or the
// group-relative RLOO / GRPO baselines: train/advantage_estimator.h), and runs several epochs of
// clipped policy (and value) updates on mini-batches. The run loop (resume, metrics, checkpoints)
// is train/training_loop.h.
#include <cstdint>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "train/policy.h"
#include "train/ppo_math.h"
#include "train/ppo_stats.h"
#include "train/ppo_task.h"
#include "train/trainer_lm.h"
#include "train/trainer_options.h"

namespace sparserl::train {

// Defaults follow TRL's PPOConfig where it has one (documented in docs/training.md).
struct ppo_options {
  run_options run;
  optimizer_options optim;       // lr 1.41e-5 in TRL; tiny models from scratch want ~1e-4
  int64_t batch_size = 8;        // tasks (matrices) per step
  int64_t samples_per_task = 1;  // G programs sampled per task: batch_size x G rollouts a step
  // "gae", "rloo" or "grpo"; empty: gae when samples_per_task is 1, else rloo.
  std::string advantage;
  int64_t mini_batch = 4;  // rollouts per update
  int ppo_epochs = 4;
  int64_t max_new_tokens = 512;
  double temperature = 1.0;
  int top_k = 0;
  double top_p = 1.0;
  // > 0: the program's header (FORMAT, LAUNCH, template line; train/program_sampler.h) is drawn
  // at this temperature and header_top_p (no top-k), the source after it as above: a group then
  // tries the programs the policy gives some weight to, without the broken sources that a wide
  // nucleus over every token writes. 0: the header is drawn as the source.
  double header_temperature = 0;
  double header_top_p = 1.0;
  double kl_coef = 0.05;
  double target_kl = 0;  // > 0: adaptive KL controller (Ziegler et al.) towards this KL
  double kl_horizon = 10000;
  double gamma = 1.0, lam = 0.95;
  // GAE: advantages are divided by max(std, this): 0.5, under the 1.0 between a wrong and a
  // correct program, so a batch that all scored alike gets a small update, not amplified noise.
  double advantage_std_floor = 0.5;
  ppo_clip_options clip;
  int reward_threads = 4;
  // The SFT anchor (PPO-ptx, Ouyang et al. 2022): with train_ppo's `sft_anchor`, every update also
  // descends sft_coef x the SFT loss of sft_batch anchor examples. PPO's updates on its matrices
  // otherwise carry to matrices it never samples (on the H100, 2026-12-06: lanes=2 learnt on
  // short-rowed RCSR matrices replaced the labels' lanes=8 on the held-out mesh3d of 15 a row).
  double sft_coef = 0;
  int64_t sft_batch = 4;
  int64_t sft_max_len = 1024;
};

// The estimator `o` asks for, with its defaults filled in ("gae", "rloo" or "grpo").
std::string advantage_name(const ppo_options& o);

struct ppo_result {
  std::vector<ppo_step_stats> steps;  // of this process
};

// Throws sparserl::error unless an anchor and sft_coef > 0 come together (and its batch and
// length are usable): the CLI checks before it loads anything, train_ppo again.
void check_sft_anchor(bool has_anchor, const ppo_options& o);
// Throws sparserl::error when the rollouts' sampling options (the header's too) are out of range.
void check_ppo_sampling(const ppo_options& o);

// `sft_anchor`: the SFT examples of the anchor term (its train split), or null for none; given,
// options.sft_coef must be > 0, and the other way round.
ppo_result train_ppo(policy& p, const std::vector<ppo_task>& tasks, evaluator& judge,
                     const ppo_options& options, const lm_dataset* sft_anchor = nullptr);

}  // namespace sparserl::train
