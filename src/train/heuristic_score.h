#pragma once
// How good the feature heuristic (kernel/heuristic.h) is, judged offline against timed labels:
// each GPU label keeps every candidate's measured time (`candidates`), so the heuristic's pick for
// the same matrix can be looked up in that ranking without a GPU. This is what a change to the
// heuristic's rules is measured with before it is timed again (`sparserl dataset score-heuristic`).
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sparse/features.h"
#include "train/sft_data.h"

namespace sparserl::train {

struct heuristic_rank {
  std::string name, family, order;  // family / order: the generator's ("" for a file's matrix)
  int64_t nnz = 0;
  std::string heuristic_config;  // expert_config::describe() of the heuristic's pick
  std::string best_config;       // the fastest correct candidate
  std::optional<double> heuristic_ms, best_ms;
  // best_ms / heuristic_ms (1: the heuristic picked the fastest); empty when its pick was not
  // among the label's timed correct candidates (the tuner's space then did not offer it).
  std::optional<double> ratio;
  int rank = 0;              // 1-based among the timed correct candidates; 0 when not among them
  int timed = 0;             // timed correct candidates
  matrix_features features;  // what the heuristic decided on
};

struct heuristic_score {
  std::vector<heuristic_rank> labels;  // one per label with timed candidates, in order
  int64_t skipped = 0;                 // labels without timed candidates (CPU labels)
};

// Fills r's best_config, best_ms, heuristic_ms, ratio, rank and timed: where r.heuristic_config
// stands among `candidates`' timed correct ones. `candidates` has at least one of those.
void rank_pick(const std::vector<sft_candidate>& candidates, heuristic_rank& r);

// Remakes each label's matrix (train/sft_data.h, to_matrix), on `threads` threads.
heuristic_score score_heuristic(const std::vector<sft_sample>& labels, int threads);

// Over the labels whose pick was found: how many, how many within `tolerance` of the fastest
// (ratio >= 1 / (1 + tolerance)), the geometric mean ratio.
struct heuristic_summary {
  int64_t labels = 0, found = 0, within = 0;
  std::optional<double> geomean_ratio;
};
heuristic_summary summarise(const std::vector<heuristic_rank>& ranks, double tolerance);

// {"tolerance", "summary": {...}, "groups": [{family, order, ...summary}], "labels": [...]}.
nlohmann::json to_json(const heuristic_score& s, double tolerance);
// A Markdown table by family and order, then the total.
std::string format_table(const heuristic_score& s, double tolerance);

}  // namespace sparserl::train
