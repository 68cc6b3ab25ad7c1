#include "train/ppo_minibatches.h"

#include <algorithm>
#include <optional>

#include "train/data_order.h"

namespace sparserl::train {

std::vector<std::vector<int64_t>> epoch_minibatches(const std::vector<int64_t>& kept, int64_t most,
                                                    int64_t size, uint64_t seed) {
  const int64_t n = static_cast<int64_t>(kept.size());
  std::optional<data_order> order;  // a rank that kept nothing has no order to draw from
  if (n > 0) order.emplace(n, seed);
  std::vector<std::vector<int64_t>> out;
  for (int64_t start = 0; start < std::max(most, n); start += size) {
    std::vector<int64_t> batch;
    if (start < n) {
      batch = order->next(std::min(size, n - start));
      for (int64_t& i : batch) i = kept[static_cast<size_t>(i)];
    }
    out.push_back(std::move(batch));
  }
  return out;
}

}  // namespace sparserl::train
