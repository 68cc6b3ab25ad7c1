#include "train/advantage_estimator.h"

#include "sparse/error.h"

namespace sparserl::train {

std::unique_ptr<advantage_estimator> make_advantage_estimator(const std::string& name,
                                                              const gae_options& gae) {
  if (name == "gae") return make_gae_estimator(gae);
  if (name == "rloo") return make_rloo_estimator();
  if (name == "grpo") return make_grpo_estimator();
  throw error("--advantage " + name + ": expected rloo, grpo or gae");
}

}  // namespace sparserl::train
