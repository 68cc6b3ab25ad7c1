#include <gtest/gtest.h>

#include <set>

#include "train/data_order.h"
#include "train/schedule.h"

namespace sparserl::train {
namespace {

TEST(lr_schedule, warms_up_then_decays_to_the_floor) {
  lr_schedule s{1.0, 4, 104, 0.1};
  EXPECT_NEAR(s.at(0), 1.0 / 5, 1e-12);
  EXPECT_NEAR(s.at(3), 4.0 / 5, 1e-12);
  EXPECT_NEAR(s.at(4), 1.0, 1e-12);    // peak right after warm-up
  EXPECT_NEAR(s.at(54), 0.55, 1e-12);  // half-way: 0.1 + 0.9 * 0.5
  EXPECT_NEAR(s.at(104), 0.1, 1e-12);  // the floor
  EXPECT_NEAR(s.at(500), 0.1, 1e-12);
  for (int64_t i = 5; i < 104; ++i) EXPECT_LE(s.at(i), s.at(i - 1));
}

TEST(data_order, every_epoch_is_a_permutation_and_epochs_differ) {
  data_order order(10, 7);
  std::vector<int64_t> a = order.next(10), b = order.next(10);
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 10u);
  EXPECT_EQ(std::set<int64_t>(b.begin(), b.end()).size(), 10u);
  EXPECT_NE(a, b);
}

TEST(data_order, resuming_at_a_position_continues_the_same_sequence) {
  data_order full(7, 3);
  std::vector<int64_t> all = full.next(30);
  data_order first(7, 3);
  std::vector<int64_t> head = first.next(13);
  data_order resumed(7, 3, first.consumed());
  std::vector<int64_t> tail = resumed.next(17);
  head.insert(head.end(), tail.begin(), tail.end());
  EXPECT_EQ(head, all);
  EXPECT_NE(data_order(7, 4).next(7), data_order(7, 3).next(7));  // the seed matters
}

}  // namespace
}  // namespace sparserl::train
