#pragma once
// A PPO step's statistics (metrics.jsonl): the reward statistics over every rank's verdicts, the
// update's losses averaged over the ranks, throughputs and the step's time split.
#include <nlohmann/json.hpp>
#include <vector>

#include "eval/verdict.h"
#include "train/data_parallel.h"

namespace sparserl::train {

struct ppo_step_stats {
  double reward_mean = 0, reward_std = 0;
  double compile_rate = 0, correct_rate = 0, extract_rate = 0;
  double mean_speedup = 0;  // over correct programs with a measured speed-up (0 if none)
  double kl = 0, entropy = 0, clip_fraction = 0, approx_kl = 0;
  double policy_loss = 0, value_loss = 0, kl_coef = 0;
  double tokens_per_s = 0, reward_evals_per_s = 0;
  double generation_s = 0, reward_s = 0, update_s = 0, response_tokens = 0;
  // Groups (the samples of one task) of the step, those left out for scoring alike, and the
  // rollouts that entered the update; summed over the ranks.
  double rollouts = 0, groups = 0, groups_tied = 0, rollouts_used = 0;
  // The SFT anchor's loss, mean over the step's updates; logged only by a run with an anchor, on
  // steps that updated the policy.
  bool has_sft_loss = false;
  double sft_loss = 0;
};

// The reward statistics over every rank's verdicts (counts summed across ranks first).
void fill_reward_stats(const std::vector<verdict>& v, ppo_step_stats& s, data_parallel& dp);

// The policy statistics averaged over the ranks (equal shares), throughputs and counts summed.
void reduce_update_stats(ppo_step_stats& s, data_parallel& dp);

nlohmann::json to_json(const ppo_step_stats& s);

}  // namespace sparserl::train
