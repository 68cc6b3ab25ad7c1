// score_heuristic: the heuristic's pick for each timed label's matrix, found in the label's own
// ranking of measured candidates.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "kernel/heuristic.h"
#include "sparse/features.h"
#include "sparse/generators.h"
#include "train/heuristic_score.h"

namespace sparserl::train {
namespace {

// A label of a generated matrix (by its coordinates) whose candidates are `times` (program ->
// ms); the heuristic's pick for it is returned through `pick`.
sft_sample label(const std::string& family, int32_t rows,
                 const std::vector<std::pair<std::string, double>>& times, std::string* pick) {
  generator_spec spec = default_spec(family);
  spec.rows = rows;
  const csr_matrix m = generate_matrix(spec);
  *pick = pick_heuristic(sparse_op::spmv, compute_features(m), 1).describe();
  sft_sample s = sft_pattern_of(m);
  s.name = family;
  s.generator = spec;
  for (const auto& [program, ms] : times) {
    sft_candidate c;
    c.program = program == "PICK" ? *pick : program;
    c.time_ms = ms;
    c.correct = true;
    s.candidates.push_back(c);
  }
  return s;
}

TEST(heuristic_score, the_pick_is_found_in_each_ranking_and_summarised) {
  std::string pick_a, pick_b, pick_c;
  std::vector<sft_sample> labels;
  // a: the pick is twice as slow as the fastest; b: it is the fastest; c: it was not timed.
  labels.push_back(label("stencil2d", 400, {{"other", 1.0}, {"PICK", 2.0}}, &pick_a));
  labels.push_back(label("random", 300, {{"PICK", 0.5}, {"slower", 0.6}}, &pick_b));
  labels.push_back(label("banded", 350, {{"x", 0.2}, {"y", 0.3}}, &pick_c));
  sft_sample cpu = labels.back();  // a CPU label: no times, left out
  for (sft_candidate& c : cpu.candidates) c.time_ms.reset();
  labels.push_back(cpu);

  const heuristic_score s = score_heuristic(labels, 2);
  ASSERT_EQ(s.labels.size(), 3u);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.labels[0].heuristic_config, pick_a);
  EXPECT_EQ(s.labels[0].best_config, "other");
  EXPECT_DOUBLE_EQ(*s.labels[0].ratio, 0.5);
  EXPECT_EQ(s.labels[0].rank, 2);
  EXPECT_EQ(s.labels[0].family, "stencil2d");
  EXPECT_DOUBLE_EQ(*s.labels[1].ratio, 1.0);
  EXPECT_EQ(s.labels[1].rank, 1);
  EXPECT_FALSE(s.labels[2].ratio);
  EXPECT_EQ(s.labels[2].rank, 0);
  EXPECT_EQ(s.labels[2].timed, 2);

  const heuristic_summary sum = summarise(s.labels, 0.1);
  EXPECT_EQ(sum.labels, 3);
  EXPECT_EQ(sum.found, 2);
  EXPECT_EQ(sum.within, 1);
  EXPECT_NEAR(*sum.geomean_ratio, std::sqrt(0.5), 1e-12);
  // 0.5 is within a tolerance of 100% (1 / (1 + 1)).
  EXPECT_EQ(summarise(s.labels, 1.0).within, 2);

  const nlohmann::json j = to_json(s, 0.1);
  EXPECT_EQ(j["summary"]["found"], 2);
  EXPECT_EQ(j["groups"].size(), 3u);
  EXPECT_EQ(j["labels"][0]["features"]["rows"], 400);
  const std::string table = format_table(s, 0.1);
  EXPECT_NE(table.find("| stencil2d | natural | 1 | 1 | 0 (0%) | 0.500x |"), std::string::npos)
      << table;
  EXPECT_NE(table.find("| **all** | | 3 | 2 | 1 (50%) | 0.707x |"), std::string::npos) << table;
}

}  // namespace
}  // namespace sparserl::train
