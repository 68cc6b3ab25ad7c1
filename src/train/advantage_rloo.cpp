// RLOO, REINFORCE leave-one-out (Kool et al. 2019; Ahmadian et al. 2024, "Back to Basics"): the
// baseline of a sample is the mean reward of the other G - 1 samples of its group, so it does
// not include the sample itself (the self-inclusion bias that Dr. Kernel's TRLOO removes from
// GRPO). A_i = r_i - (sum_j r_j - r_i) / (G - 1) = G / (G - 1) * (r_i - mean).
#include "sparse/error.h"
#include "train/advantage_estimator.h"
#include "train/group_advantage.h"

namespace sparserl::train {

std::vector<double> rloo_advantages(const std::vector<double>& rewards) {
  const size_t g = rewards.size();
  if (g < 2) throw error("rloo: a group needs at least 2 samples (--samples-per-task >= 2)");
  double sum = 0;
  for (double r : rewards) sum += r;
  std::vector<double> out;
  out.reserve(g);
  for (double r : rewards) out.push_back(r - (sum - r) / static_cast<double>(g - 1));
  return out;
}

namespace {

class rloo_estimator final : public advantage_estimator {
 public:
  const char* name() const override { return "rloo"; }
  bool uses_value_head() const override { return false; }
  advantage_result estimate(const advantage_inputs& in) const override {
    return group_relative_advantages(in, rloo_advantages);
  }
};

}  // namespace

std::unique_ptr<advantage_estimator> make_rloo_estimator() {
  return std::make_unique<rloo_estimator>();
}

}  // namespace sparserl::train
