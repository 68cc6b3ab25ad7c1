// The progress bar's output, on a fake clock: what a line says, how often lines come on a
// terminal and in a log, and that a resumed loop's rate counts only this process's work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "train/progress_bar.h"

namespace sparserl::train {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class progress_bar_test : public ::testing::Test {
 protected:
  void SetUp() override { out_ = std::tmpfile(); }
  void TearDown() override { std::fclose(out_); }

  progress_options options(bool terminal) {
    progress_options o;
    o.out = out_;
    o.terminal = terminal;
    o.clock = [this] { return now_; };
    return o;
  }
  std::string written() {
    std::fflush(out_);
    std::rewind(out_);
    std::string text;
    for (int c; (c = std::fgetc(out_)) != EOF;) text += static_cast<char>(c);
    return text;
  }
  static int count(const std::string& text, const std::string& part) {
    int n = 0;
    for (size_t p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
    return n;
  }

  std::FILE* out_ = nullptr;
  double now_ = 100;
};

TEST_F(progress_bar_test, a_line_shows_count_percentage_rate_eta_and_note) {
  progress_options o = options(false);
  o.unit = "steps";
  progress_bar bar("sft", 100, true, o);
  bar.update(0);
  now_ += 10;
  bar.update(25, "loss 1.234");
  EXPECT_EQ(bar.render(now_),
            "sft  25/100   25% [######..................]  2.50 steps/s  ETA 0:30  loss 1.234");
}

TEST_F(progress_bar_test, slow_loops_show_seconds_per_item_and_unknown_totals_no_eta) {
  progress_bar slow("ppo", 10, true, options(false));
  slow.update(0);
  now_ += 120;
  slow.update(2);
  EXPECT_THAT(slow.render(now_), HasSubstr("60.0 s/it  ETA 8:00"));
  progress_bar unknown("scan", 0, true, options(false));
  unknown.advance(5);
  EXPECT_THAT(unknown.render(now_ + 5), Not(HasSubstr("ETA")));
  EXPECT_THAT(unknown.render(now_ + 5), Not(HasSubstr("%")));
}

TEST_F(progress_bar_test, a_resumed_loop_counts_its_rate_from_the_first_update) {
  progress_bar bar("pretrain", 1000, true, options(false));
  now_ += 50;       // construction long before the loop: not counted either
  bar.update(900);  // resumed at step 900
  now_ += 10;
  bar.update(910);
  EXPECT_THAT(bar.render(now_), HasSubstr("1.00 it/s  ETA 1:30"));
}

TEST_F(progress_bar_test, in_a_log_lines_come_at_most_every_five_seconds_and_at_finish) {
  {
    progress_bar bar("labelling", 1000, true, options(false));
    for (int i = 0; i < 1000; ++i) {
      now_ += 0.1;  // 100 s in all
      bar.advance();
    }
    bar.finish();
    bar.finish();  // idempotent
  }
  const std::string text = written();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  const int lines = count(text, "\n");
  EXPECT_GE(lines, 19);
  EXPECT_LE(lines, 22);
  EXPECT_THAT(
      text,
      HasSubstr("labelling  1000/1000  100% [########################]  10.00 it/s  in 1:40\n"));
}

TEST_F(progress_bar_test, on_a_terminal_it_redraws_in_place_ten_times_a_second) {
  {
    progress_bar bar("sft", 100, true, options(true));
    for (int i = 1; i <= 100; ++i) {
      now_ += 0.01;  // 1 s in all
      bar.update(i);
    }
    bar.finish();
  }
  const std::string text = written();
  const int draws = count(text, "\r");
  EXPECT_GE(draws, 9);
  EXPECT_LE(draws, 12);
  EXPECT_EQ(count(text, "\n"), 1);  // one line, ended at finish
  EXPECT_THAT(text, HasSubstr("\x1b[K"));
}

TEST_F(progress_bar_test, an_unfinished_terminal_line_is_ended_when_the_bar_goes) {
  {
    progress_bar bar("sft", 10, true, options(true));
    bar.update(3);
  }  // e.g. an exception unwinding: the error message must not land on the bar's line
  const std::string text = written();
  EXPECT_EQ(text.back(), '\n');
  EXPECT_THAT(text, Not(HasSubstr(" in ")));
}

TEST_F(progress_bar_test, a_disabled_bar_prints_nothing) {
  {
    progress_bar bar("sft", 10, false, options(true));
    bar.update(5);
    bar.finish();
  }
  EXPECT_EQ(written(), "");
}

TEST_F(progress_bar_test, threads_may_advance_it_together) {
  progress_bar bar("labelling", 4000, true, options(false));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) bar.advance();
    });
  for (std::thread& t : threads) t.join();
  EXPECT_THAT(bar.render(now_), HasSubstr("4000/4000"));
}

TEST(format_duration, minutes_and_hours) {
  EXPECT_EQ(format_duration(5), "0:05");
  EXPECT_EQ(format_duration(754), "12:34");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-1), "?");
}

}  // namespace
}  // namespace sparserl::train
