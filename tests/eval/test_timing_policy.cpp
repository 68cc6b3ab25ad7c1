// The timing protocol's rules (eval/timing_policy.h), which the GPU worker follows with CUDA
// events: when the repetition loop stops, what is reported, and when L2 is flushed.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "eval/timing_policy.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

TEST(TimingPolicy, SummaryOfOddAndEvenSamples) {
  const timing_options o;
  const timing_summary odd = summarize_times({3.0, 1.0, 2.0}, o, false);
  EXPECT_DOUBLE_EQ(odd.median_ms, 2.0);
  EXPECT_DOUBLE_EQ(odd.min_ms, 1.0);
  EXPECT_EQ(odd.reps, 3);
  const timing_summary even = summarize_times({4.0, 1.0, 3.0, 2.0}, o, false);
  EXPECT_DOUBLE_EQ(even.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(even.p90_ms, 4.0);  // nearest rank: ceil(0.9 * 4) = 4th smallest
}

TEST(TimingPolicy, PercentilesOfAShuffledRamp) {
  // 1..50 ms in random order: the median is 25.5, p90 the 45th smallest.
  std::vector<double> ms;
  for (int i = 1; i <= 50; ++i) ms.push_back(i);
  std::shuffle(ms.begin(), ms.end(), std::mt19937(7));
  const timing_summary s = summarize_times(ms, timing_options{}, true);
  EXPECT_DOUBLE_EQ(s.median_ms, 25.5);
  EXPECT_DOUBLE_EQ(s.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.p90_ms, 45.0);
  EXPECT_TRUE(s.l2_flushed);
}

TEST(TimingPolicy, EmptySampleIsAnError) {
  EXPECT_THROW(summarize_times({}, timing_options{}, false), error);
}

TEST(TimingPolicy, RepetitionsNeedBothCountAndTotalTime) {
  timing_options o;
  o.min_reps = 20;
  o.min_total_ms = 20;
  EXPECT_TRUE(need_more_reps(o, 0, 0, 0));
  EXPECT_TRUE(need_more_reps(o, 19, 100, 0.1));  // enough time, too few runs
  EXPECT_TRUE(need_more_reps(o, 20, 10, 0.1));   // enough runs, too little time
  EXPECT_FALSE(need_more_reps(o, 20, 20, 0.1));
  EXPECT_FALSE(need_more_reps(o, o.max_reps, 1, 0.1));      // tiny kernels stop at max_reps
  EXPECT_FALSE(need_more_reps(o, 5, 5, o.max_wall_s));      // slow kernels stop at the wall limit
  EXPECT_TRUE(need_more_reps(o, 0, 0, 10 * o.max_wall_s));  // but always one timed run
}

TEST(TimingPolicy, WarmupStopsAtCountOrWallLimit) {
  timing_options o;
  o.warmup = 3;
  EXPECT_TRUE(need_more_warmup(o, 2, 0));
  EXPECT_FALSE(need_more_warmup(o, 3, 0));
  EXPECT_FALSE(need_more_warmup(o, 0, o.max_wall_s));
  o.warmup = 0;
  EXPECT_FALSE(need_more_warmup(o, 0, 0));
}

TEST(TimingPolicy, L2IsFlushedOnlyForWorkingSetsThatFitTwice) {
  timing_options o;
  const int64_t l2 = 50 << 20;
  EXPECT_TRUE(should_flush_l2(o, l2, l2));
  EXPECT_TRUE(should_flush_l2(o, 2 * l2 - 1, l2));
  EXPECT_FALSE(should_flush_l2(o, 2 * l2, l2));
  EXPECT_FALSE(should_flush_l2(o, 1, 0));  // unknown L2 size: nothing to flush
  o.flush = l2_flush_mode::always;
  EXPECT_TRUE(should_flush_l2(o, 100 * l2, l2));
  o.flush = l2_flush_mode::never;
  EXPECT_FALSE(should_flush_l2(o, 1, l2));
}

TEST(TimingPolicy, MethodStringDescribesTheProtocol) {
  timing_options o;
  o.min_reps = 20;
  o.min_total_ms = 20;
  std::vector<double> ms(20, 1.5);
  EXPECT_EQ(summarize_times(ms, o, true).method,
            "CUDA events, 5 warm-up, median of 20 (>= 20 ms), L2 flushed");
  EXPECT_EQ(
      summarize_times({1.0, 2.0}, o, false).method,
      "CUDA events, 5 warm-up, median of 2 (>= 20 ms), cut at the 10 s limit, L2 not flushed");
  o.min_reps = 2;
  o.max_reps = 2;
  EXPECT_NE(summarize_times({1.0, 2.0}, o, false).method.find("stopped at 2 runs"),
            std::string::npos);
}

TEST(TimingPolicy, ValidationNamesTheBadField) {
  timing_options o;
  EXPECT_NO_THROW(validate_timing_options(o));
  o.max_reps = 3;
  try {
    validate_timing_options(o);
    FAIL() << "max_reps below min_reps accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("max_reps"), std::string::npos);
  }
  o = {};
  o.max_wall_s = 0;
  EXPECT_THROW(validate_timing_options(o), error);
}

}  // namespace
}  // namespace sparserl
