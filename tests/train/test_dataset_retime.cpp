// Timed labels brought up to date: the candidates a label's ranking lacks are timed beside its
// recorded best, put on the recorded scale and merged; the label follows the fastest. Timing is
// the GPU protocol acted out on the CPU emulator with made-up times (eval/timed_cpu_runner.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "eval/cpu_runner.h"
#include "eval/timed_cpu_runner.h"
#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/generators.h"
#include "train/dataset_retime.h"

namespace sparserl::train {
namespace {

using ::testing::HasSubstr;

eval_options timed_options() {
  eval_options o;
  o.trials = 2;
  o.checked_timed_runs = 2;
  o.compile.timeout_s = 60;
  o.limits.launch_timeout_s = 10;
  return o;
}

// RCSR programs take a quarter of the time of the others: the new candidates win.
double made_up_ms(const run_request& r) {
  return r.program->format == format_kind::rcsr ? 0.25 : 1.0;
}

csr_matrix knn_in_random_order() {
  generator_spec s = default_spec("knn");
  s.rows = 400;
  s.order = "random";
  s.seed = 3;
  return generate_matrix(s);
}

// A label as a GPU run before RCSR would have made it: csr_vector the fastest at 2 ms, one slower
// candidate, no RCSR anywhere in the ranking.
sft_sample label_before_rcsr(const csr_matrix& m, const std::string& name) {
  sft_sample s = sft_pattern_of(m);
  s.name = name;
  s.split = "train";
  s.label = "autotune";
  expert_config best;
  for (const expert_config& c : expert_space(sparse_op::spmv, compute_features(m), 1))
    if (c.name == "csr_vector") best = c;
  const kernel_program program = emit_program(best);
  s.code = program.to_text();
  s.format = format_name(program.format);
  s.candidates = {{best.describe(), 2.0, 1.1, true},
                  {"ell spmv ELL block=128 unroll=1", 3.0, 0.7, true}};
  return s;
}

TEST(dataset_retime, new_candidates_are_timed_scaled_to_the_recorded_best_and_win_the_label) {
  const csr_matrix m = knn_in_random_order();
  const matrix_features f = compute_features(m);
  std::vector<sft_sample> samples = {label_before_rcsr(m, "stale")};
  // A heuristic label (no ranking to extend) and a label whose ranking already holds today's
  // whole space (nothing new to time).
  sft_sample heuristic = label_before_rcsr(m, "heuristic");
  heuristic.label = "heuristic";
  samples.push_back(heuristic);
  sft_sample complete = label_before_rcsr(m, "complete");
  for (const expert_config& c : expert_space(sparse_op::spmv, f, 1))
    complete.candidates.push_back({c.describe(), 5.0, 0.5, true});
  complete.candidates.push_back({pick_heuristic(sparse_op::spmv, f, 1).describe(), 5.0, 0.5, true});
  samples.push_back(complete);

  cpu_runner cpu;
  timed_cpu_runner timed(cpu, 4, 2, made_up_ms);
  retime_options o;
  o.progress = false;
  o.threads = 2;
  const retime_result r = retime_labels(samples, timed, timed_options(), o);
  ASSERT_EQ(r.samples.size(), 3u);
  EXPECT_EQ(r.retimed, 1);
  EXPECT_EQ(r.relabelled, 1);
  EXPECT_EQ(r.not_timed, 1);
  EXPECT_EQ(r.up_to_date, 1);
  EXPECT_EQ(r.failed, 0);
  EXPECT_TRUE(r.warnings.empty());

  const sft_sample& stale = r.samples[0];
  // The recorded best ran at 1 ms now against 2 ms then: new times are doubled.
  EXPECT_DOUBLE_EQ(stale.extra.at("retime_scale").get<double>(), 2.0);
  std::set<std::string> programs;
  int rcsr = 0;
  for (const sft_candidate& c : stale.candidates) {
    EXPECT_TRUE(programs.insert(c.program).second) << "twice: " << c.program;
    EXPECT_TRUE(c.correct) << c.program;
    ASSERT_TRUE(c.time_ms.has_value()) << c.program;
    if (c.program.find(" RCSR") != std::string::npos) {
      EXPECT_DOUBLE_EQ(*c.time_ms, 0.5);
      ++rcsr;
    }
  }
  EXPECT_GT(rcsr, 0);
  EXPECT_EQ(static_cast<int64_t>(stale.candidates.size()), 2 + r.new_candidates);
  // Ranked fastest first, the earlier times unchanged; the label is the fastest, an RCSR program.
  for (size_t i = 1; i < stale.candidates.size(); ++i)
    EXPECT_LE(*stale.candidates[i - 1].time_ms, *stale.candidates[i].time_ms);
  EXPECT_EQ(stale.format, "RCSR");
  EXPECT_THAT(stale.code, HasSubstr("// expert: " + stale.candidates.front().program));
  EXPECT_THAT(stale.code, HasSubstr("spmv_rcsr_gather"));
  bool kept = false;
  for (const sft_candidate& c : stale.candidates)
    kept |= c.program == samples[0].candidates[1].program && *c.time_ms == 3.0;
  EXPECT_TRUE(kept);
  // The others as they were.
  EXPECT_EQ(r.samples[1].code, samples[1].code);
  EXPECT_EQ(r.samples[1].candidates.size(), samples[1].candidates.size());
  EXPECT_EQ(r.samples[2].candidates.size(), samples[2].candidates.size());
  EXPECT_FALSE(r.samples[2].extra.contains("retime_scale"));
}

TEST(dataset_retime, the_plan_counts_what_would_be_timed_without_a_runner) {
  const csr_matrix m = knn_in_random_order();
  sft_sample heuristic = label_before_rcsr(m, "heuristic");
  heuristic.label = "heuristic";
  const std::vector<sft_sample> samples = {label_before_rcsr(m, "stale"), heuristic};
  const retime_plan plan = plan_retime(samples, 2);
  EXPECT_EQ(plan.labels, 1);
  EXPECT_EQ(plan.not_timed, 1);
  EXPECT_EQ(plan.up_to_date, 0);
  ASSERT_GT(plan.by_template.count("rcsr_vector"), 0u);
  int64_t sum = 0;
  for (const auto& [name, count] : plan.by_template) sum += count;
  EXPECT_EQ(sum, plan.new_candidates);
  // The same count the retiming then times.
  cpu_runner cpu;
  timed_cpu_runner timed(cpu, 4, 2, made_up_ms);
  retime_options o;
  o.progress = false;
  EXPECT_EQ(retime_labels(samples, timed, timed_options(), o).new_candidates, plan.new_candidates);
}

TEST(dataset_retime, labels_not_reached_in_the_time_limit_are_left_for_a_second_run) {
  const csr_matrix m = knn_in_random_order();
  cpu_runner cpu;
  timed_cpu_runner timed(cpu, 4, 2, made_up_ms);
  retime_options o;
  o.progress = false;
  o.time_limit_s = 1e-9;  // spent before the first label
  const std::vector<sft_sample> before = {label_before_rcsr(m, "a"), label_before_rcsr(m, "b")};
  const retime_result first = retime_labels(before, timed, timed_options(), o);
  EXPECT_EQ(first.not_reached, 2);
  EXPECT_EQ(first.retimed, 0);
  EXPECT_EQ(first.samples[0].candidates.size(), before[0].candidates.size());
  o.time_limit_s = 0;
  const retime_result second = retime_labels(first.samples, timed, timed_options(), o);
  EXPECT_EQ(second.relabelled, 2);
  const retime_result third = retime_labels(second.samples, timed, timed_options(), o);
  EXPECT_EQ(third.up_to_date, 2);  // nothing left to time
  EXPECT_EQ(third.samples[0].candidates.size(), second.samples[0].candidates.size());
}

TEST(dataset_retime, a_slower_new_candidate_joins_the_ranking_but_not_the_label) {
  const csr_matrix m = knn_in_random_order();
  cpu_runner cpu;
  // Everything at 1 ms now: the recorded best (2 ms then) stays the fastest once scaled, tied.
  timed_cpu_runner timed(cpu, 4, 2);
  retime_options o;
  o.progress = false;
  const sft_sample before = label_before_rcsr(m, "tied");
  const retime_result r = retime_labels({before}, timed, timed_options(), o);
  EXPECT_EQ(r.retimed, 1);
  EXPECT_EQ(r.relabelled, 0);
  EXPECT_EQ(r.samples[0].code, before.code);
  EXPECT_GT(r.samples[0].candidates.size(), before.candidates.size());
}

TEST(dataset_retime,
     a_label_that_no_longer_runs_is_kept_with_a_warning_and_untimed_runners_refused) {
  const csr_matrix m = knn_in_random_order();
  sft_sample broken = label_before_rcsr(m, "broken");
  broken.code = "FORMAT: CSR\nnot a program";
  cpu_runner cpu;
  timed_cpu_runner timed(cpu, 4, 2);
  retime_options o;
  o.progress = false;
  const retime_result r = retime_labels({broken}, timed, timed_options(), o);
  EXPECT_EQ(r.failed, 1);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("broken"));
  EXPECT_EQ(r.samples[0].candidates.size(), broken.candidates.size());
  // The emulator alone measures no time: a ranking cannot be extended with it.
  eval_options untimed = timed_options();
  try {
    retime_labels({label_before_rcsr(m, "x")}, cpu, untimed, o);
    FAIL() << "retimed without timing";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("retiming needs a GPU"));
  }
}

}  // namespace
}  // namespace sparserl::train
