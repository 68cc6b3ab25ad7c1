#include "train/ppo_stats.h"

#include <algorithm>
#include <cmath>

namespace sparserl::train {

void fill_reward_stats(const std::vector<verdict>& v, ppo_step_stats& s, data_parallel& dp) {
  std::vector<double> t(8, 0.0);  // sum, squares, compiled, correct, extracted, speed, timed, n
  for (const verdict& x : v) {
    t[0] += x.reward;
    t[1] += x.reward * x.reward;
    t[2] += x.compiled;
    t[3] += x.correct;
    t[4] += x.extracted;
    if (x.correct && x.speedup) {
      t[5] += *x.speedup;
      t[6] += 1;
    }
  }
  t[7] = static_cast<double>(v.size());
  t = dp.sum(t);
  const double n = t[7];
  s.reward_mean = t[0] / n;
  s.reward_std = std::sqrt(std::max(0.0, t[1] / n - s.reward_mean * s.reward_mean));
  s.compile_rate = t[2] / n;
  s.correct_rate = t[3] / n;
  s.extract_rate = t[4] / n;
  s.mean_speedup = t[6] > 0 ? t[5] / t[6] : 0.0;
}

void reduce_update_stats(ppo_step_stats& s, data_parallel& dp) {
  if (dp.world_size() == 1) return;
  const double w = dp.world_size();
  const std::vector<double> t =
      dp.sum({s.kl, s.entropy, s.clip_fraction, s.approx_kl, s.policy_loss, s.value_loss,
              s.tokens_per_s, s.reward_evals_per_s, s.response_tokens, s.groups, s.groups_tied,
              s.rollouts_used, s.rollouts, s.sft_loss});
  s.kl = t[0] / w;
  s.entropy = t[1] / w;
  s.clip_fraction = t[2] / w;
  s.approx_kl = t[3] / w;
  s.policy_loss = t[4] / w;
  s.value_loss = t[5] / w;
  s.tokens_per_s = t[6];
  s.reward_evals_per_s = t[7];
  s.response_tokens = t[8];
  s.groups = t[9];
  s.groups_tied = t[10];
  s.rollouts_used = t[11];
  s.rollouts = t[12];
  s.sft_loss = t[13] / w;
}

nlohmann::json to_json(const ppo_step_stats& s) {
  nlohmann::json j = {{"reward_mean", s.reward_mean},
                      {"reward_std", s.reward_std},
                      {"compile_rate", s.compile_rate},
                      {"correct_rate", s.correct_rate},
                      {"extract_rate", s.extract_rate},
                      {"mean_speedup", s.mean_speedup},
                      {"kl", s.kl},
                      {"entropy", s.entropy},
                      {"clip_fraction", s.clip_fraction},
                      {"approx_kl", s.approx_kl},
                      {"policy_loss", s.policy_loss},
                      {"value_loss", s.value_loss},
                      {"kl_coef", s.kl_coef},
                      {"tokens_per_s", s.tokens_per_s},
                      {"reward_evals_per_s", s.reward_evals_per_s},
                      {"generation_s", s.generation_s},
                      {"reward_s", s.reward_s},
                      {"update_s", s.update_s},
                      {"response_tokens", s.response_tokens},
                      {"rollouts", s.rollouts},
                      {"groups", s.groups},
                      {"groups_tied", s.groups_tied},
                      {"groups_used", s.groups - s.groups_tied},
                      {"rollouts_used", s.rollouts_used}};
  if (s.has_sft_loss) j["sft_loss"] = s.sft_loss;
  return j;
}

}  // namespace sparserl::train
