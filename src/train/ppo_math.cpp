#include "train/ppo_math.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>

namespace sparserl::train {

torch::Tensor token_logprobs(const torch::Tensor& logits, const torch::Tensor& targets) {
  torch::Tensor logp = torch::log_softmax(logits.to(torch::kFloat32), -1);
  return logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1);
}

torch::Tensor token_entropy(const torch::Tensor& logits) {
  torch::Tensor logp = torch::log_softmax(logits.to(torch::kFloat32), -1);
  return -(logp.exp() * logp).sum(-1);
}

torch::Tensor masked_mean(const torch::Tensor& x, const torch::Tensor& mask) {
  return (x * mask).sum() / mask.sum().clamp_min(1.0);
}

torch::Tensor masked_var(const torch::Tensor& x, const torch::Tensor& mask) {
  torch::Tensor centered = x - masked_mean(x, mask);
  torch::Tensor n = mask.sum();
  // Bessel's correction as TRL applies it, guarded for a single element.
  torch::Tensor correction = n / (n - 1).clamp_min(1.0);
  return masked_mean(centered * centered, mask) * correction;
}

torch::Tensor masked_whiten(const torch::Tensor& x, const torch::Tensor& mask, bool shift_mean,
                            double std_floor) {
  torch::Tensor mean = masked_mean(x, mask);
  torch::Tensor std = torch::sqrt(masked_var(x, mask) + 1e-8).clamp_min(std_floor);
  torch::Tensor whitened = (x - mean) / std;
  if (!shift_mean) whitened = whitened + mean;
  return whitened * mask;
}

torch::Tensor kl_shaped_rewards(const torch::Tensor& scores, const torch::Tensor& logprobs,
                                const torch::Tensor& ref_logprobs, const torch::Tensor& mask,
                                double kl_coef) {
  torch::Tensor rewards = -kl_coef * (logprobs - ref_logprobs) * mask;
  // The last real token of each row: the index of the largest position whose mask is 1.
  torch::Tensor positions = torch::arange(mask.size(1), mask.options()).expand_as(mask);
  torch::Tensor last = (positions * mask).argmax(1);
  return rewards.scatter_add(1, last.unsqueeze(1), scores.to(rewards.dtype()).unsqueeze(1));
}

gae_result compute_gae(const torch::Tensor& rewards, const torch::Tensor& values,
                       const torch::Tensor& mask, double gamma, double lam, double std_floor) {
  torch::NoGradGuard no_grad;
  const int64_t t = rewards.size(1);
  torch::Tensor r = rewards * mask, v = values * mask;
  std::vector<torch::Tensor> reversed;
  torch::Tensor last_gae = torch::zeros({rewards.size(0)}, rewards.options());
  for (int64_t i = t - 1; i >= 0; --i) {
    torch::Tensor next_value = i + 1 < t ? v.select(1, i + 1) : torch::zeros_like(last_gae);
    torch::Tensor delta = r.select(1, i) + gamma * next_value - v.select(1, i);
    // Padding after a sequence's end must not leak into its last real token.
    last_gae = (delta + gamma * lam * last_gae) * mask.select(1, i);
    reversed.push_back(last_gae);
  }
  std::reverse(reversed.begin(), reversed.end());
  torch::Tensor advantages = torch::stack(reversed, 1);
  gae_result out;
  out.returns = advantages + v;
  out.advantages = masked_whiten(advantages, mask, true, std_floor);
  return out;
}

ppo_loss_terms ppo_losses(const torch::Tensor& logprobs, const torch::Tensor& old_logprobs,
                          const torch::Tensor& values, const torch::Tensor& old_values,
                          const torch::Tensor& advantages, const torch::Tensor& returns,
                          const torch::Tensor& mask, const ppo_clip_options& o) {
  ppo_loss_terms out;
  if (values.defined()) {
    torch::Tensor clipped_values =
        old_values + torch::clamp(values - old_values, -o.cliprange_value, o.cliprange_value);
    torch::Tensor vf1 = (values - returns).pow(2), vf2 = (clipped_values - returns).pow(2);
    out.value_loss = 0.5 * masked_mean(torch::max(vf1, vf2), mask);
  } else {
    out.value_loss = torch::zeros({}, logprobs.options());
  }

  torch::Tensor log_ratio = logprobs - old_logprobs;
  torch::Tensor ratio = log_ratio.exp();
  torch::Tensor pg1 = -advantages * ratio;
  torch::Tensor pg2 = -advantages * torch::clamp(ratio, 1.0 - o.cliprange, 1.0 + o.cliprange);
  out.policy_loss = masked_mean(torch::max(pg1, pg2), mask);
  out.loss = out.policy_loss + o.vf_coef * out.value_loss;
  torch::NoGradGuard no_grad;
  out.clip_fraction = masked_mean((pg2 > pg1).to(torch::kFloat32), mask);
  out.approx_kl = 0.5 * masked_mean(log_ratio.pow(2), mask);
  return out;
}

void kl_controller::update(double observed_kl, int64_t samples) {
  if (target_ <= 0) return;
  double error = std::clamp(observed_kl / target_ - 1.0, -0.2, 0.2);
  coef_ *= 1.0 + error * static_cast<double>(samples) / horizon_;
}

}  // namespace sparserl::train
