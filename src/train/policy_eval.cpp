#include "train/policy_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "train/program_sampler.h"

namespace sparserl::train {
namespace {

void summarise(held_out_report& r) {
  double log_sum = 0, reward_sum = 0;
  for (const held_out_result& h : r.results) {
    const verdict& v = h.judged;
    r.extracted += v.extracted;
    r.compiled += v.compiled;
    r.correct += v.correct;
    reward_sum += v.reward;
    if (v.correct && v.speedup && *v.speedup > 0) {
      log_sum += std::log(*v.speedup);
      ++r.timed;
    }
  }
  if (!r.results.empty()) r.mean_reward = reward_sum / static_cast<double>(r.results.size());
  if (r.timed > 0) r.geomean_speedup = std::exp(log_sum / static_cast<double>(r.timed));
}

}  // namespace

std::vector<std::vector<held_out_result>> sample_and_judge(const policy& p,
                                                           const std::vector<eval_matrix>& matrices,
                                                           evaluator& judge, int64_t max_new_tokens,
                                                           const sampling_options& sampling,
                                                           int per_matrix, int batch,
                                                           program_verdicts* verdicts) {
  std::vector<std::vector<held_out_result>> out(matrices.size());
  const size_t copies = static_cast<size_t>(std::max(per_matrix, 1));
  // Whole matrices per generation batch: at least one, about `batch` programs.
  const size_t step = std::max<size_t>(1, static_cast<size_t>(std::max(batch, 1)) / copies);
  for (size_t begin = 0; begin < matrices.size(); begin += step) {
    const size_t end = std::min(matrices.size(), begin + step);
    std::vector<matrix_input> inputs;
    inputs.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) inputs.push_back(read_matrix(p, *matrices[i].matrix));
    std::vector<program_request> requests;
    for (size_t i = begin; i < end; ++i)
      for (size_t c = 0; c < copies; ++c)
        requests.push_back({matrices[i].op, matrices[i].k, &inputs[i - begin]});
    sampling_options s = sampling;
    s.seed = sampling.seed + begin;  // each batch its own stream, the same on every run
    const sampled_programs sampled = sample_programs(p, requests, max_new_tokens, s);
    for (size_t i = begin; i < end; ++i) {
      const eval_matrix& m = matrices[i];
      for (size_t c = 0; c < copies; ++c) {
        held_out_result h;
        h.name = m.name;
        h.program = sampled.generations[(i - begin) * copies + c].text;
        const eval_task task{m.op, m.matrix, m.k, m.name};
        h.judged =
            verdicts ? verdicts->judge(judge, task, h.program) : judge.evaluate(task, h.program);
        out[i].push_back(std::move(h));
      }
    }
  }
  return out;
}

held_out_report evaluate_held_out(const policy& p, const std::vector<sft_sample>& samples,
                                  evaluator& judge, int64_t max_new_tokens, int batch) {
  std::vector<csr_matrix> matrices;
  matrices.reserve(samples.size());
  for (const sft_sample& s : samples) matrices.push_back(to_matrix(s));
  std::vector<eval_matrix> tasks;
  for (size_t i = 0; i < samples.size(); ++i) {
    const std::string name =
        samples[i].name.empty() ? "sample " + std::to_string(i) : samples[i].name;
    tasks.push_back(
        {"held_out:" + std::to_string(i) + ":" + name, samples[i].op, samples[i].k, &matrices[i]});
  }
  std::vector<std::vector<held_out_result>> judged =
      sample_and_judge(p, tasks, judge, max_new_tokens, sampling_options{0, 0, 1.0, 0}, 1, batch);
  held_out_report report;
  for (size_t i = 0; i < samples.size(); ++i) {
    held_out_result h = std::move(judged[i].front());
    h.name = samples[i].name.empty() ? "sample " + std::to_string(i) : samples[i].name;
    report.results.push_back(std::move(h));
  }
  summarise(report);
  return report;
}

std::string summary_line(const held_out_report& r) {
  char buf[256];
  const long long n = r.size();
  int len =
      std::snprintf(buf, sizeof buf,
                    "extracted %lld/%lld, compiled %lld/%lld, correct %lld/%lld, mean reward %.3f",
                    static_cast<long long>(r.extracted), n, static_cast<long long>(r.compiled), n,
                    static_cast<long long>(r.correct), n, r.mean_reward);
  if (r.geomean_speedup && len > 0)
    std::snprintf(buf + len, sizeof buf - static_cast<size_t>(len),
                  ", geomean speed-up %.3fx over %lld timed", *r.geomean_speedup,
                  static_cast<long long>(r.timed));
  return buf;
}

nlohmann::json to_json(const held_out_report& r) {
  nlohmann::json j;
  j["matrices"] = r.size();
  j["extracted"] = r.extracted;
  j["compiled"] = r.compiled;
  j["correct"] = r.correct;
  j["mean_reward"] = r.mean_reward;
  j["timed"] = r.timed;
  j["geomean_speedup"] = r.geomean_speedup ? nlohmann::json(*r.geomean_speedup) : nlohmann::json();
  j["results"] = nlohmann::json::array();
  for (const held_out_result& h : r.results) {
    nlohmann::json v = verdict_to_json(h.judged);
    v["matrix"] = h.name;
    j["results"].push_back(std::move(v));
  }
  return j;
}

}  // namespace sparserl::train
