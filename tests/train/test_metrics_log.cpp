// The metrics log: lines in the file as soon as they are appended, a reader that tolerates a run
// still writing, and resuming that drops exactly the steps after the checkpoint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "scratch_dir.h"
#include "sparse/error.h"
#include "train/metrics_log.h"

namespace sparserl::train {
namespace {

using ::testing::HasSubstr;

std::vector<int64_t> steps_of(const std::string& path) {
  std::vector<int64_t> steps;
  for (const metrics_record& r : read_metrics(path)) steps.push_back(r.step);
  return steps;
}

void log_steps(const std::string& path, int64_t resume, int64_t from, int64_t to) {
  metrics_log log(path, resume);
  for (int64_t s = from; s <= to; ++s) log.append(s, {{"loss", 10.0 / s}});
}

TEST(metrics_log, appended_lines_are_readable_at_once_with_time_and_scalars) {
  testing::scratch_dir dir;
  const std::string path = dir / "run/metrics.jsonl";  // the directory is created
  metrics_log log(path, 0);
  log.append(0, {{"val_loss", 2.5}});
  log.append(1, {{"loss", 2.0}, {"lr", 3e-4}, {"tokens", 4096}, {"kind", "sft"}, {"ok", true}});
  // Read while the log is open: nothing is buffered.
  const std::vector<metrics_record> r = read_metrics(path);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].step, 0);
  EXPECT_DOUBLE_EQ(r[0].values["val_loss"].get<double>(), 2.5);
  EXPECT_EQ(r[1].values["tokens"], 4096);
  EXPECT_EQ(r[1].values["kind"], "sft");
  EXPECT_DOUBLE_EQ(r[1].values["lr"].get<double>(), 3e-4);
  EXPECT_FALSE(r[1].values.contains("step"));
  EXPECT_GT(r[1].time, 1.6e9);  // Unix seconds
  EXPECT_GE(r[1].time, r[0].time);
}

TEST(metrics_log, non_finite_values_become_null_and_bad_scalars_are_refused) {
  testing::scratch_dir dir;
  metrics_log log(dir / "m.jsonl", 0);
  log.append(1, {{"kl", std::nan("")}, {"ratio", INFINITY}});
  const std::vector<metrics_record> r = read_metrics(dir / "m.jsonl");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].values["kl"].is_null());
  EXPECT_TRUE(r[0].values["ratio"].is_null());
  EXPECT_THROW(log.append(2, {{"step", 1}}), error);
  EXPECT_THROW(log.append(2, {{"hist", {1, 2}}}), error);
  EXPECT_THROW(log.append(2, nlohmann::json::array()), error);
}

TEST(metrics_log, resuming_keeps_the_steps_up_to_the_checkpoint_and_drops_the_rest) {
  testing::scratch_dir dir;
  const std::string path = dir / "metrics.jsonl";
  log_steps(path, 0, 1, 8);  // killed after step 8; the last checkpoint was at step 5
  log_steps(path, 5, 6, 10);
  EXPECT_EQ(steps_of(path), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  const std::vector<metrics_record> r = read_metrics(path);
  EXPECT_DOUBLE_EQ(r[6].values["loss"].get<double>(), 10.0 / 7);
}

TEST(metrics_log, a_fresh_run_starts_an_empty_log) {
  testing::scratch_dir dir;
  const std::string path = dir / "metrics.jsonl";
  log_steps(path, 0, 0, 4);
  log_steps(path, 0, 0, 1);
  EXPECT_EQ(steps_of(path), (std::vector<int64_t>{0, 1}));
}

TEST(metrics_log, a_line_cut_by_a_crash_is_skipped_by_the_reader_and_dropped_on_resume) {
  testing::scratch_dir dir;
  const std::string path = dir / "metrics.jsonl";
  log_steps(path, 0, 1, 3);
  const std::string complete = testing::read_text(path);
  testing::write_text(path, complete + "{\"step\": 4, \"lo");
  EXPECT_EQ(steps_of(path), (std::vector<int64_t>{1, 2, 3}));
  truncate_metrics(path, 3);
  EXPECT_EQ(testing::read_text(path), complete);  // kept lines stay byte for byte
  log_steps(path, 3, 4, 4);
  EXPECT_EQ(steps_of(path), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(metrics_log, truncating_nothing_leaves_the_file_untouched) {
  testing::scratch_dir dir;
  const std::string path = dir / "metrics.jsonl";
  log_steps(path, 0, 1, 3);
  const auto before = std::filesystem::last_write_time(path);
  const std::string text = testing::read_text(path);
  truncate_metrics(path, 3);
  EXPECT_EQ(testing::read_text(path), text);
  EXPECT_EQ(std::filesystem::last_write_time(path), before);
  truncate_metrics(dir / "missing.jsonl", 3);  // a missing log stays missing
  EXPECT_FALSE(std::filesystem::exists(dir / "missing.jsonl"));
}

TEST(metrics_log, a_bad_line_is_an_error_with_its_line_number) {
  testing::scratch_dir dir;
  const std::string path = dir / "metrics.jsonl";
  testing::write_text(path, "{\"step\": 1, \"loss\": 1}\n{\"loss\": 2}\n{\"step\": 3}\n");
  try {
    read_metrics(path);
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path + ":2: expected an integer \"step\""));
  }
  EXPECT_THROW(metrics_log resumed(path, 2), error);  // resuming over a corrupt log says so too
}

}  // namespace
}  // namespace sparserl::train
