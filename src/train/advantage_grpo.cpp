// GRPO, group relative policy optimisation (Shao et al. 2024, DeepSeekMath), outcome
// supervision: A_i = (r_i - mean(r)) / (std(r) + eps) over the G samples of the group, the same
// for every token of the sample; std with Bessel's correction and eps = 1e-4 as TRL's
// GRPOTrainer.
#include <cmath>

#include "sparse/error.h"
#include "train/advantage_estimator.h"
#include "train/group_advantage.h"

namespace sparserl::train {

std::vector<double> grpo_advantages(const std::vector<double>& rewards, double eps) {
  const size_t g = rewards.size();
  if (g < 2) throw error("grpo: a group needs at least 2 samples (--samples-per-task >= 2)");
  double mean = 0;
  for (double r : rewards) mean += r;
  mean /= static_cast<double>(g);
  double squares = 0;
  for (double r : rewards) squares += (r - mean) * (r - mean);
  const double std = std::sqrt(squares / static_cast<double>(g - 1));
  std::vector<double> out;
  out.reserve(g);
  for (double r : rewards) out.push_back((r - mean) / (std + eps));
  return out;
}

namespace {

class grpo_estimator final : public advantage_estimator {
 public:
  explicit grpo_estimator(double eps) : eps_(eps) {}
  const char* name() const override { return "grpo"; }
  bool uses_value_head() const override { return false; }
  advantage_result estimate(const advantage_inputs& in) const override {
    return group_relative_advantages(
        in, [this](const std::vector<double>& r) { return grpo_advantages(r, eps_); });
  }

 private:
  double eps_;
};

}  // namespace

std::unique_ptr<advantage_estimator> make_grpo_estimator(double eps) {
  return std::make_unique<grpo_estimator>(eps);
}

}  // namespace sparserl::train
