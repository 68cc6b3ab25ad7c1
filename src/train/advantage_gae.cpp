// GAE with the value head (Schulman et al. 2016), as TRL's PPOTrainer: per-token rewards from the
// KL to the reference plus the score on the last token, GAE(gamma, lambda) backwards over each
// program, advantages whitened over the batch with the std floored (train/ppo_math.h). Every
// rollout enters the update: the critic, not the group, is the baseline.
#include <algorithm>

#include "train/advantage_estimator.h"
#include "train/ppo_math.h"

namespace sparserl::train {
namespace {

class gae_estimator final : public advantage_estimator {
 public:
  explicit gae_estimator(const gae_options& o) : o_(o) {}
  const char* name() const override { return "gae"; }
  bool uses_value_head() const override { return true; }
  advantage_result estimate(const advantage_inputs& in) const override {
    const torch::Tensor rewards =
        kl_shaped_rewards(in.scores, in.logprobs, in.ref_logprobs, in.mask, in.kl_coef);
    gae_result gae = compute_gae(rewards, in.values, in.mask, o_.gamma, o_.lam, o_.std_floor);
    advantage_result out;
    out.advantages = gae.advantages;
    out.returns = gae.returns;
    const int64_t b = in.scores.size(0);
    for (int64_t i = 0; i < b; ++i) out.used.push_back(i);
    for (int64_t g : in.group) out.groups = std::max(out.groups, g + 1);
    return out;
  }

 private:
  gae_options o_;
};

}  // namespace

std::unique_ptr<advantage_estimator> make_gae_estimator(const gae_options& options) {
  return std::make_unique<gae_estimator>(options);
}

}  // namespace sparserl::train
