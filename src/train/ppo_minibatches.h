#pragma once
// The mini-batches of one PPO epoch: the rollouts an estimator kept, shuffled in a seeded order,
// cut into batches of `size`; then empty batches up to the count of the rank that kept the most,
// because every rank must run as many updates (their gradients are summed together), a rank
// short of rollouts adding zero gradients.
#include <cstdint>
#include <vector>

namespace sparserl::train {

// `kept`: row indices; `most`: the most rows any rank kept (>= kept.size()); size >= 1.
std::vector<std::vector<int64_t>> epoch_minibatches(const std::vector<int64_t>& kept, int64_t most,
                                                    int64_t size, uint64_t seed);

}  // namespace sparserl::train
