#pragma once
// How PPO turns a step's judged rollouts into per-token advantages: the one thing that differs
// between GAE with a learned critic and the group-relative baselines (RLOO, GRPO), all run over
// the same loop (train/trainer_ppo.h), as verl's core_algos makes them swappable. An estimator is
// one file: advantage_gae.cpp, advantage_rloo.cpp, advantage_grpo.cpp.
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sparserl::train {

struct advantage_inputs {
  torch::Tensor scores;        // [b] the harness's reward of each rollout
  torch::Tensor logprobs;      // [b, t] of the response tokens under the rollout policy
  torch::Tensor ref_logprobs;  // [b, t] under the reference (SFT) policy
  torch::Tensor values;        // [b, t] the value head's (undefined without one)
  torch::Tensor mask;          // [b, t] 1 on real response tokens
  // group[i]: which group rollout i belongs to (the samples of one task in one step share one),
  // numbered 0, 1, ... in order of first appearance.
  std::vector<int64_t> group;
  double kl_coef = 0;
};

struct advantage_result {
  torch::Tensor advantages;  // [b, t], 0 on padding
  torch::Tensor returns;     // [b, t] the value head's targets; undefined without a critic
  // The rollouts that enter the update (a group whose samples all scored alike has no signal).
  std::vector<int64_t> used;
  int64_t groups = 0, groups_tied = 0;
};

class advantage_estimator {
 public:
  virtual ~advantage_estimator() = default;
  virtual const char* name() const = 0;
  // Whether it learns a critic: the value head is then scored, trained and its loss logged.
  virtual bool uses_value_head() const = 0;
  virtual advantage_result estimate(const advantage_inputs& in) const = 0;
};

struct gae_options {
  double gamma = 1.0, lam = 0.95;
  double std_floor = 0.5;  // advantages are whitened with the std floored here
};

std::unique_ptr<advantage_estimator> make_gae_estimator(const gae_options& options);
std::unique_ptr<advantage_estimator> make_rloo_estimator();
std::unique_ptr<advantage_estimator> make_grpo_estimator(double eps = 1e-4);

// "gae", "rloo" or "grpo"; anything else is an error naming the choices.
std::unique_ptr<advantage_estimator> make_advantage_estimator(const std::string& name,
                                                              const gae_options& gae);

}  // namespace sparserl::train
