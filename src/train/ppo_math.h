#pragma once
// The tensor arithmetic of PPO (after TRL's PPOTrainer, Ziegler et al. 2019): per-token rewards
// from the score and the KL to the reference, generalised advantage estimation, whitening, and the
// clipped policy and value losses. Every tensor is [batch, response tokens] with a 0/1 float mask
// marking the real (not padded) response tokens; pure functions, so each is tested on its own.
#include <torch/types.h>

namespace sparserl::train {

// log p(target) per position: logits [b, t, vocab] (any float dtype), targets [b, t] int64.
torch::Tensor token_logprobs(const torch::Tensor& logits, const torch::Tensor& targets);

// Entropy of each position's distribution, [b, t].
torch::Tensor token_entropy(const torch::Tensor& logits);

// Mean over the mask's ones (0 when the mask is empty).
torch::Tensor masked_mean(const torch::Tensor& x, const torch::Tensor& mask);
torch::Tensor masked_var(const torch::Tensor& x, const torch::Tensor& mask);

// (x - mean) / max(std, std_floor) over the masked entries; with shift_mean false the mean is
// added back (TRL does this for rewards).
torch::Tensor masked_whiten(const torch::Tensor& x, const torch::Tensor& mask,
                            bool shift_mean = true, double std_floor = 0.0);

// Reward per token: -kl_coef * (logprob - ref_logprob) everywhere, plus each sequence's score on
// its last real token. scores [b].
torch::Tensor kl_shaped_rewards(const torch::Tensor& scores, const torch::Tensor& logprobs,
                                const torch::Tensor& ref_logprobs, const torch::Tensor& mask,
                                double kl_coef);

struct gae_result {
  torch::Tensor advantages;  // whitened over the mask
  torch::Tensor returns;     // advantages (before whitening) + values
};

// GAE(gamma, lambda) backwards over each sequence; padded positions get 0 and do not carry.
// Advantages are whitened with std_floor: when every program of a batch scores the same, their
// spread is only value-head noise, and dividing by that tiny std would turn noise into full-size
// updates (it wrecks a small policy within steps); a floor near the gap between reward tiers
// keeps such a batch's update small.
gae_result compute_gae(const torch::Tensor& rewards, const torch::Tensor& values,
                       const torch::Tensor& mask, double gamma, double lam, double std_floor = 0.0);

struct ppo_loss_terms {
  torch::Tensor loss;         // policy + vf_coef * value (the one to backward)
  torch::Tensor policy_loss;  // clipped surrogate
  torch::Tensor value_loss;   // clipped, 0.5 * max(squared errors)
  torch::Tensor clip_fraction;
  torch::Tensor approx_kl;  // 0.5 * mean((logp - old)^2)
};

struct ppo_clip_options {
  double cliprange = 0.2;
  double cliprange_value = 0.2;
  double vf_coef = 0.1;
};

// Without a critic (values undefined; old_values and returns are then ignored) the value loss
// is 0.
ppo_loss_terms ppo_losses(const torch::Tensor& logprobs, const torch::Tensor& old_logprobs,
                          const torch::Tensor& values, const torch::Tensor& old_values,
                          const torch::Tensor& advantages, const torch::Tensor& returns,
                          const torch::Tensor& mask, const ppo_clip_options& options);

// The adaptive KL coefficient of Ziegler et al.: moves kl_coef so the observed KL approaches
// `target` over `horizon` samples. With target <= 0 the coefficient stays fixed.
class kl_controller {
 public:
  kl_controller(double init_coef, double target, double horizon)
      : coef_(init_coef), target_(target), horizon_(horizon) {}
  double value() const { return coef_; }
  void update(double observed_kl, int64_t samples);
  void set_value(double coef) { coef_ = coef; }

 private:
  double coef_, target_, horizon_;
};

}  // namespace sparserl::train
