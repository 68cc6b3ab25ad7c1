// PPO's mini-batches over the kept rollouts: every kept row once per epoch, in the seeded order,
// and as many (possibly empty) batches on every rank as on the rank that kept the most.
#include <gtest/gtest.h>

#include <algorithm>

#include "train/data_order.h"
#include "train/ppo_minibatches.h"

namespace sparserl::train {
namespace {

TEST(ppo_minibatches, every_kept_row_once_then_empty_batches_up_to_the_most) {
  const std::vector<int64_t> kept = {3, 5, 6};
  const auto batches = epoch_minibatches(kept, 7, 2, 11);
  ASSERT_EQ(batches.size(), 4u);  // ceil(7 / 2): the rank with 7 kept rows runs 4 updates
  EXPECT_EQ(batches[0].size(), 2u);
  EXPECT_EQ(batches[1].size(), 1u);
  EXPECT_TRUE(batches[2].empty());
  EXPECT_TRUE(batches[3].empty());
  std::vector<int64_t> seen = batches[0];
  seen.insert(seen.end(), batches[1].begin(), batches[1].end());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, kept);
}

TEST(ppo_minibatches, a_rank_that_kept_nothing_still_runs_every_update) {
  const auto batches = epoch_minibatches({}, 5, 2, 11);
  ASSERT_EQ(batches.size(), 3u);
  for (const auto& b : batches) EXPECT_TRUE(b.empty());
  EXPECT_TRUE(epoch_minibatches({}, 0, 2, 11).empty());  // nothing kept anywhere: no update
}

TEST(ppo_minibatches, all_kept_is_the_seeded_order_over_every_rollout) {
  // Every rollout kept (GAE, or no tied group): the same batches as the data order over the
  // whole step, so runs from before group-relative estimators replay bit for bit.
  const std::vector<int64_t> all = {0, 1, 2, 3, 4};
  const auto batches = epoch_minibatches(all, 5, 2, 42);
  data_order order(5, 42);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], order.next(2));
  EXPECT_EQ(batches[1], order.next(2));
  EXPECT_EQ(batches[2], order.next(1));
}

}  // namespace
}  // namespace sparserl::train
