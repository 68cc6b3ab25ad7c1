#include "train/heuristic_score.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/features.h"
#include "train/parallel_for.h"

namespace sparserl::train {

namespace {

bool has_timed_candidates(const sft_sample& s) {
  return std::any_of(s.candidates.begin(), s.candidates.end(),
                     [](const sft_candidate& c) { return c.correct && c.time_ms; });
}

heuristic_rank rank_of(const sft_sample& s) {
  heuristic_rank r;
  r.name = s.name;
  if (s.generator) {
    r.family = s.generator->family;
    r.order = s.generator->order;
  }
  r.nnz = s.nnz();
  r.features = compute_features(to_matrix(s));
  r.heuristic_config = pick_heuristic(s.op, r.features, s.k).describe();
  rank_pick(s.candidates, r);
  return r;
}

nlohmann::json summary_json(const heuristic_summary& s) {
  return {{"labels", s.labels},
          {"found", s.found},
          {"within", s.within},
          {"geomean_ratio", s.geomean_ratio ? nlohmann::json(*s.geomean_ratio) : nlohmann::json()}};
}

std::string summary_cells(const heuristic_summary& s) {
  char ratio[32] = "-";
  if (s.geomean_ratio) std::snprintf(ratio, sizeof ratio, "%.3fx", *s.geomean_ratio);
  char buf[160];
  std::snprintf(
      buf, sizeof buf, "%lld | %lld | %lld (%.0f%%) | %s", static_cast<long long>(s.labels),
      static_cast<long long>(s.found), static_cast<long long>(s.within),
      s.found ? 100.0 * static_cast<double>(s.within) / static_cast<double>(s.found) : 0.0, ratio);
  return buf;
}

std::map<std::pair<std::string, std::string>, std::vector<heuristic_rank>> by_group(
    const heuristic_score& s) {
  std::map<std::pair<std::string, std::string>, std::vector<heuristic_rank>> groups;
  for (const heuristic_rank& r : s.labels) groups[{r.family, r.order}].push_back(r);
  return groups;
}

}  // namespace

void rank_pick(const std::vector<sft_candidate>& candidates, heuristic_rank& r) {
  std::vector<std::pair<double, std::string>> timed;
  for (const sft_candidate& c : candidates)
    if (c.correct && c.time_ms) timed.emplace_back(*c.time_ms, c.program);
  std::sort(timed.begin(), timed.end());
  r.timed = static_cast<int>(timed.size());
  r.best_config = timed.front().second;
  r.best_ms = timed.front().first;
  r.heuristic_ms.reset();
  r.ratio.reset();
  r.rank = 0;
  for (size_t i = 0; i < timed.size(); ++i) {
    if (timed[i].second != r.heuristic_config) continue;
    r.heuristic_ms = timed[i].first;
    r.ratio = *r.best_ms / timed[i].first;
    r.rank = static_cast<int>(i) + 1;
    break;
  }
}

heuristic_score score_heuristic(const std::vector<sft_sample>& labels, int threads) {
  std::vector<const sft_sample*> timed;
  heuristic_score out;
  for (const sft_sample& s : labels) {
    if (has_timed_candidates(s))
      timed.push_back(&s);
    else
      ++out.skipped;
  }
  out.labels.resize(timed.size());
  parallel_for(timed.size(), threads, [&](size_t i) { out.labels[i] = rank_of(*timed[i]); });
  return out;
}

heuristic_summary summarise(const std::vector<heuristic_rank>& ranks, double tolerance) {
  heuristic_summary s;
  double log_sum = 0;
  for (const heuristic_rank& r : ranks) {
    ++s.labels;
    if (!r.ratio) continue;
    ++s.found;
    s.within += *r.ratio >= 1.0 / (1.0 + tolerance);
    log_sum += std::log(*r.ratio);
  }
  if (s.found) s.geomean_ratio = std::exp(log_sum / static_cast<double>(s.found));
  return s;
}

nlohmann::json to_json(const heuristic_score& s, double tolerance) {
  nlohmann::json j;
  j["tolerance"] = tolerance;
  j["skipped"] = s.skipped;
  j["summary"] = summary_json(summarise(s.labels, tolerance));
  j["groups"] = nlohmann::json::array();
  for (const auto& [key, ranks] : by_group(s)) {
    nlohmann::json g = summary_json(summarise(ranks, tolerance));
    g["family"] = key.first;
    g["order"] = key.second;
    j["groups"].push_back(g);
  }
  j["labels"] = nlohmann::json::array();
  for (const heuristic_rank& r : s.labels) {
    j["labels"].push_back(
        {{"name", r.name},
         {"family", r.family},
         {"order", r.order},
         {"nnz", r.nnz},
         {"heuristic_config", r.heuristic_config},
         {"best_config", r.best_config},
         {"heuristic_ms", r.heuristic_ms ? nlohmann::json(*r.heuristic_ms) : nlohmann::json()},
         {"best_ms", r.best_ms ? nlohmann::json(*r.best_ms) : nlohmann::json()},
         {"ratio", r.ratio ? nlohmann::json(*r.ratio) : nlohmann::json()},
         {"rank", r.rank},
         {"timed", r.timed},
         {"features", features_to_json(r.features)}});
  }
  return j;
}

std::string format_table(const heuristic_score& s, double tolerance) {
  char head[200];
  std::snprintf(head, sizeof head,
                "| family | order | labels | pick timed | within %.0f%% of the fastest | "
                "geomean fastest / pick |\n|---|---|---|---|---|---|\n",
                100 * tolerance);
  std::string out = head;
  for (const auto& [key, ranks] : by_group(s))
    out += "| " + (key.first.empty() ? "(file)" : key.first) + " | " + key.second + " | " +
           summary_cells(summarise(ranks, tolerance)) + " |\n";
  out += "| **all** | | " + summary_cells(summarise(s.labels, tolerance)) + " |\n";
  return out;
}

}  // namespace sparserl::train
