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

held_out_report evaluate_held_out(const policy& p, const std::vector<sft_sample>& samples,
                                  evaluator& judge, int64_t max_new_tokens, int batch) {
  held_out_report report;
  const size_t step = static_cast<size_t>(std::max(batch, 1));
  for (size_t begin = 0; begin < samples.size(); begin += step) {
    const size_t end = std::min(samples.size(), begin + step);
    std::vector<csr_matrix> matrices;
    std::vector<matrix_encoding> encodings;
    matrices.reserve(end - begin);
    encodings.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) {
      matrices.push_back(to_matrix(samples[i]));
      encodings.push_back(p.encode(matrices.back()));
    }
    std::vector<program_request> requests;
    for (size_t i = begin; i < end; ++i)
      requests.push_back(
          {samples[i].op, samples[i].k, &matrices[i - begin], &encodings[i - begin]});
    const sampled_programs s =
        sample_programs(p, requests, max_new_tokens, sampling_options{0, 0, 1.0, 0});
    for (size_t i = begin; i < end; ++i) {
      const sft_sample& sample = samples[i];
      held_out_result h;
      h.name = sample.name.empty() ? "sample " + std::to_string(i) : sample.name;
      h.program = s.generations[i - begin].text;
      h.judged = judge.evaluate({sample.op, &matrices[i - begin], sample.k,
                                 "held_out:" + std::to_string(i) + ":" + h.name},
                                h.program);
      report.results.push_back(std::move(h));
    }
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
