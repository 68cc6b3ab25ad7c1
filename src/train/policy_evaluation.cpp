#include "train/policy_evaluation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eval/autotune.h"
#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/content_hash.h"
#include "sparse/error.h"
#include "sparse/features.h"

namespace sparserl::train {
namespace {

std::optional<double> timed_speedup(const verdict& v) {
  if (v.correct && v.speedup && *v.speedup > 0) return v.speedup;
  return std::nullopt;
}

// The geometric mean over every matrix of `pick`'s speed-up, 1.0 where it has none; null when
// no matrix has one.
template <class Pick>
std::optional<double> geomean(const std::vector<matrix_evaluation>& ms, Pick pick) {
  double log_sum = 0;
  bool any = false;
  for (const matrix_evaluation& m : ms) {
    const std::optional<double> s = pick(m);
    if (s) any = true;
    log_sum += std::log(s.value_or(1.0));
  }
  if (!any || ms.empty()) return std::nullopt;
  return std::exp(log_sum / static_cast<double>(ms.size()));
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

std::string speedup_cell(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", *v);
  return buf;
}

void judge_heuristic(evaluator& judge, program_verdicts& verdicts, const eval_matrix& task,
                     const matrix_features& f, matrix_baselines& b) {
  const expert_config c = pick_heuristic(task.op, f, task.k);
  const verdict v =
      verdicts.judge(judge, {task.op, task.matrix, task.k, task.name}, emit_program(c));
  b.heuristic_config = c.describe();
  b.heuristic_correct = v.correct;
  b.heuristic_speedup = timed_speedup(v);
}

// The tuned best's program (found by this run's tuning or an earlier one's) timed again now, beside
// the policy's programs: the tuner's own time of its winner is the best of many noisy draws, and an
// earlier run's time is another run's. False (the earlier figure kept) when today's tuning space no
// longer holds that program.
bool retime_tuned(evaluator& judge, program_verdicts& verdicts, const eval_matrix& task,
                  const matrix_features& f, matrix_baselines& b) {
  if (b.tuned_config.empty()) return false;
  const std::optional<expert_config> c = find_in_tuning_space(task.op, f, task.k, b.tuned_config);
  if (!c) return false;
  const verdict v =
      verdicts.judge(judge, {task.op, task.matrix, task.k, task.name}, emit_program(*c));
  b.tuned_speedup = timed_speedup(v);
  return true;
}

// The search for the tuned best: the costly part, which --baselines saves.
void tune(evaluator& judge, const eval_matrix& task, const policy_evaluation_options& o,
          matrix_baselines& b) {
  b.tuned = true;
  const tune_result t = autotune(judge, {task.op, task.matrix, task.k, task.name}, o.tune_threads);
  if (const tuned_candidate* best = t.best()) {
    b.tuned_config = best->config.describe();
    b.tuned_speedup = timed_speedup(best->result);
  }
}

std::optional<double> optional_number(const nlohmann::json& j, const char* field) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) throw error(std::string("baselines: '") + field + "' is not a number");
  return it->get<double>();
}

std::string optional_text(const nlohmann::json& j, const char* field) {
  const auto it = j.find(field);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

policy_evaluation evaluate_policy(const policy& p, const std::vector<eval_matrix>& matrices,
                                  evaluator& judge, const policy_evaluation_options& o) {
  if (o.samples < 1) throw error("evaluate-policy: --samples must be at least 1");
  policy_evaluation e;
  e.samples_per_matrix = o.samples;
  e.executor = o.executor;
  const bool timing = e.executor == "gpu";
  // Every column judges a program once per matrix: the greedy program sampled again, or the
  // heuristic's pick written by the policy, shares the verdict (program_verdicts.h says why).
  program_verdicts verdicts;
  const auto greedy = sample_and_judge(p, matrices, judge, o.max_new_tokens,
                                       sampling_options{0, 0, 1.0, 0}, 1, o.batch, &verdicts);
  const auto sampled = sample_and_judge(p, matrices, judge, o.max_new_tokens, o.sampling, o.samples,
                                        o.batch, &verdicts);
  for (size_t i = 0; i < matrices.size(); ++i) {
    matrix_evaluation m;
    const csr_matrix& a = *matrices[i].matrix;
    m.name = matrices[i].name;
    m.matrix_id = csr_content_id(a);
    m.rows = a.rows;
    m.cols = a.cols;
    m.nnz = a.nnz();
    m.greedy = greedy[i].front();
    m.greedy_speedup = timed_speedup(m.greedy.judged);
    m.samples = sampled[i];
    for (const held_out_result& s : m.samples) {
      m.compiled += s.judged.compiled;
      m.correct += s.judged.correct;
      const std::optional<double> speed = timed_speedup(s.judged);
      if (speed && (!m.best_of_k_speedup || *speed > *m.best_of_k_speedup))
        m.best_of_k_speedup = speed;
    }
    // Every speed-up in a row is timed in this run, beside the policy's programs (METHOD: both
    // sides in one run); an earlier evaluation only saves the tuning search.
    const auto earlier = o.baselines.find(m.matrix_id);
    if (earlier != o.baselines.end() && (earlier->second.tuned || !(o.tune && timing))) {
      m.baselines = earlier->second;
      m.baselines_reused = true;
      ++e.baselines_reused;
    } else if (o.tune && timing) {
      tune(judge, matrices[i], o, m.baselines);
    }
    if (o.heuristic || timing) {
      const matrix_features f = compute_features(a);  // once for both (megabytes of matrix)
      if (o.heuristic) judge_heuristic(judge, verdicts, matrices[i], f, m.baselines);
      if (timing) m.tuned_retimed = retime_tuned(judge, verdicts, matrices[i], f, m.baselines);
    }
    e.samples += static_cast<int64_t>(m.samples.size());
    e.compiled += m.compiled;
    e.correct += m.correct;
    e.greedy_compiled += m.greedy.judged.compiled;
    e.greedy_correct += m.greedy.judged.correct;
    e.matrices.push_back(std::move(m));
  }
  e.verdicts_shared = verdicts.shared();
  e.geomean_greedy = geomean(e.matrices, [](const auto& m) { return m.greedy_speedup; });
  e.geomean_best_of_k = geomean(e.matrices, [](const auto& m) { return m.best_of_k_speedup; });
  e.geomean_heuristic =
      geomean(e.matrices, [](const auto& m) { return m.baselines.heuristic_speedup; });
  e.geomean_tuned = geomean(e.matrices, [](const auto& m) { return m.baselines.tuned_speedup; });
  return e;
}

std::map<std::string, matrix_baselines> baselines_from_json(const nlohmann::json& evaluation) {
  if (!evaluation.is_object() || !evaluation.contains("matrices") ||
      !evaluation["matrices"].is_array())
    throw error("baselines: not an evaluate_policy.json (no \"matrices\" list)");
  std::map<std::string, matrix_baselines> out;
  for (const nlohmann::json& m : evaluation["matrices"]) {
    const std::string id = optional_text(m, "matrix_id");
    if (id.empty()) continue;  // written before matrices had ids: measured again
    matrix_baselines b;
    b.heuristic_speedup = optional_number(m, "speedup_heuristic");
    b.tuned_speedup = optional_number(m, "speedup_tuned");
    if (m.contains("heuristic_correct") && m["heuristic_correct"].is_boolean())
      b.heuristic_correct = m["heuristic_correct"].get<bool>();
    b.heuristic_config = optional_text(m, "heuristic_config");
    b.tuned_config = optional_text(m, "tuned_config");
    b.tuned = m.value("tuned", false);
    out[id] = b;
  }
  return out;
}

nlohmann::json to_json(const policy_evaluation& e) {
  nlohmann::json j;
  const double n = static_cast<double>(std::max<int64_t>(e.samples, 1));
  const double mats = static_cast<double>(std::max<size_t>(e.matrices.size(), 1));
  j["executor"] = e.executor;
  j["samples_per_matrix"] = e.samples_per_matrix;
  j["summary"] = {{"matrices", e.matrices.size()},
                  {"samples", e.samples},
                  {"compiled", e.compiled},
                  {"correct", e.correct},
                  {"compile_rate", static_cast<double>(e.compiled) / n},
                  {"correct_rate", static_cast<double>(e.correct) / n},
                  {"greedy_compiled", e.greedy_compiled},
                  {"greedy_correct", e.greedy_correct},
                  {"greedy_compile_rate", static_cast<double>(e.greedy_compiled) / mats},
                  {"greedy_correct_rate", static_cast<double>(e.greedy_correct) / mats},
                  {"geomean_speedup_greedy", optional_json(e.geomean_greedy)},
                  {"geomean_speedup_best_of_k", optional_json(e.geomean_best_of_k)},
                  {"geomean_speedup_heuristic", optional_json(e.geomean_heuristic)},
                  {"geomean_speedup_tuned", optional_json(e.geomean_tuned)},
                  {"baselines_reused", e.baselines_reused},
                  {"verdicts_shared", e.verdicts_shared}};
  j["matrices"] = nlohmann::json::array();
  for (const matrix_evaluation& m : e.matrices) {
    nlohmann::json g = verdict_to_json(m.greedy.judged);
    nlohmann::json samples = nlohmann::json::array();
    for (const held_out_result& s : m.samples) samples.push_back(verdict_to_json(s.judged));
    j["matrices"].push_back(
        {{"matrix", m.name},
         {"matrix_id", m.matrix_id},
         {"rows", m.rows},
         {"cols", m.cols},
         {"nnz", m.nnz},
         {"samples", m.samples.size()},
         {"compiled", m.compiled},
         {"correct", m.correct},
         {"compile_rate", static_cast<double>(m.compiled) /
                              static_cast<double>(std::max<size_t>(m.samples.size(), 1))},
         {"correct_rate", static_cast<double>(m.correct) /
                              static_cast<double>(std::max<size_t>(m.samples.size(), 1))},
         {"greedy", g},
         // The program itself: which format and configuration the policy chose, for the analysis.
         {"greedy_program", m.greedy.program},
         {"speedup_greedy", optional_json(m.greedy_speedup)},
         {"speedup_best_of_k", optional_json(m.best_of_k_speedup)},
         {"speedup_heuristic", optional_json(m.baselines.heuristic_speedup)},
         {"speedup_tuned", optional_json(m.baselines.tuned_speedup)},
         {"heuristic_correct", m.baselines.heuristic_correct
                                   ? nlohmann::json(*m.baselines.heuristic_correct)
                                   : nlohmann::json()},
         {"heuristic_config", m.baselines.heuristic_config},
         {"tuned_config", m.baselines.tuned_config},
         {"tuned", m.baselines.tuned},
         {"baselines_reused", m.baselines_reused},
         {"tuned_retimed", m.tuned_retimed},
         {"sample_verdicts", samples}});
  }
  return j;
}

std::string format_table(const policy_evaluation& e) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-28s %10s %9s %9s %8s %8s %9s %8s\n", "matrix", "nnz",
                "compiled", "correct", "greedy", "best-K", "heuristic", "tuned");
  out += line;
  for (const matrix_evaluation& m : e.matrices) {
    const std::string compiled =
        std::to_string(m.compiled) + "/" + std::to_string(m.samples.size());
    const std::string correct = std::to_string(m.correct) + "/" + std::to_string(m.samples.size());
    std::string greedy = speedup_cell(m.greedy_speedup);
    if (!m.greedy_speedup) greedy = m.greedy.judged.correct ? "ok" : "wrong";
    if (!m.greedy.judged.compiled) greedy = m.greedy.judged.extracted ? "no-cc" : "no-prog";
    std::string heuristic = speedup_cell(m.baselines.heuristic_speedup);
    if (!m.baselines.heuristic_speedup && m.baselines.heuristic_correct)
      heuristic = *m.baselines.heuristic_correct ? "ok" : "wrong";
    std::snprintf(line, sizeof line, "%-28s %10lld %9s %9s %8s %8s %9s %8s\n",
                  m.name.substr(0, 28).c_str(), static_cast<long long>(m.nnz), compiled.c_str(),
                  correct.c_str(), greedy.c_str(), speedup_cell(m.best_of_k_speedup).c_str(),
                  heuristic.c_str(), speedup_cell(m.baselines.tuned_speedup).c_str());
    out += line;
  }
  const double n = static_cast<double>(std::max<int64_t>(e.samples, 1));
  std::snprintf(line, sizeof line,
                "%zu matrices x %d samples (%s): compile rate %.3f, correct rate %.3f; greedy "
                "correct %lld/%zu\n",
                e.matrices.size(), e.samples_per_matrix, e.executor.c_str(),
                static_cast<double>(e.compiled) / n, static_cast<double>(e.correct) / n,
                static_cast<long long>(e.greedy_correct), e.matrices.size());
  out += line;
  out += "geomean speed-up over cuSPARSE: greedy " + speedup_cell(e.geomean_greedy) +
         ", best of K " + speedup_cell(e.geomean_best_of_k) + ", heuristic " +
         speedup_cell(e.geomean_heuristic) + ", tuned best " + speedup_cell(e.geomean_tuned) + "\n";
  return out;
}

}  // namespace sparserl::train
