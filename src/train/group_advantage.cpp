#include "train/group_advantage.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>

#include "sparse/error.h"

namespace sparserl::train {

bool group_tied(const std::vector<double>& scores) {
  if (scores.empty()) return true;
  const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  return *hi - *lo < tie_tolerance;
}

advantage_result group_relative_advantages(
    const advantage_inputs& in,
    const std::function<std::vector<double>(const std::vector<double>&)>& per_group) {
  torch::NoGradGuard no_grad;
  const int64_t b = in.scores.size(0);
  if (static_cast<int64_t>(in.group.size()) != b)
    throw error("advantages: " + std::to_string(in.group.size()) + " group ids for " +
                std::to_string(b) + " rollouts");
  // The sequence reward: the score, less the KL penalty summed over the program's tokens.
  const torch::Tensor kl = ((in.logprobs - in.ref_logprobs) * in.mask).sum(1);
  const torch::Tensor seq = (in.scores.to(torch::kFloat64) - in.kl_coef * kl.to(torch::kFloat64))
                                .to(torch::kCPU)
                                .contiguous();
  const torch::Tensor score = in.scores.to(torch::kFloat64).to(torch::kCPU).contiguous();
  const double* seq_p = seq.data_ptr<double>();
  const double* score_p = score.data_ptr<double>();

  advantage_result out;
  int64_t groups = 0;
  for (int64_t g : in.group) groups = std::max(groups, g + 1);
  std::vector<std::vector<int64_t>> members(static_cast<size_t>(groups));
  for (int64_t i = 0; i < b; ++i) members[static_cast<size_t>(in.group[i])].push_back(i);
  std::vector<double> advantage(static_cast<size_t>(b), 0.0);
  for (const std::vector<int64_t>& rows : members) {
    if (rows.empty()) continue;
    ++out.groups;
    std::vector<double> scores, rewards;
    for (int64_t i : rows) {
      scores.push_back(score_p[i]);
      rewards.push_back(seq_p[i]);
    }
    if (group_tied(scores)) {
      ++out.groups_tied;
      continue;
    }
    const std::vector<double> a = per_group(rewards);
    for (size_t j = 0; j < rows.size(); ++j) {
      advantage[static_cast<size_t>(rows[j])] = a[j];
      out.used.push_back(rows[j]);
    }
  }
  std::sort(out.used.begin(), out.used.end());
  const torch::Tensor per_row =
      torch::tensor(advantage, torch::kFloat64).to(in.mask.device()).to(in.mask.scalar_type());
  out.advantages = per_row.unsqueeze(1) * in.mask;
  return out;
}

}  // namespace sparserl::train
