#include "train/dataset_retime.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "kernel/completion.h"
#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "train/parallel_for.h"
#include "train/progress_bar.h"

namespace sparserl::train {

namespace {

enum class fate { not_timed, up_to_date, retimed, relabelled, failed, not_reached };

struct sample_outcome {
  fate kind = fate::not_timed;
  int64_t new_candidates = 0;
  std::string warning;
};

// The fastest correct timed candidate: the label of an autotuned sample.
const sft_candidate* recorded_best(const sft_sample& s) {
  const sft_candidate* best = nullptr;
  for (const sft_candidate& c : s.candidates)
    if (c.correct && c.time_ms && (!best || *c.time_ms < *best->time_ms)) best = &c;
  return best;
}

// What retiming extends: a label chosen by timing, with its ranking's times.
bool timed_label(const sft_sample& s) { return s.label == "autotune" && recorded_best(s); }

// Correct first, by time; then the failures, in their order (as autotune ranks).
void rank(std::vector<sft_candidate>& candidates) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const sft_candidate& a, const sft_candidate& b) {
                     const bool ta = a.correct && a.time_ms, tb = b.correct && b.time_ms;
                     if (ta != tb) return ta;
                     return ta && *a.time_ms < *b.time_ms;
                   });
}

// Today's space for the sample's matrix (and the heuristic's pick) less what its ranking holds.
std::vector<expert_config> missing_candidates(const sft_sample& s, const csr_matrix& m) {
  const matrix_features f = compute_features(m);
  const std::vector<expert_config> space = tuning_space(s.op, f, s.k);
  std::set<std::string> known;
  for (const sft_candidate& c : s.candidates) known.insert(c.program);
  std::vector<expert_config> fresh;
  for (const expert_config& c : space)
    if (known.insert(c.describe()).second) fresh.push_back(c);
  return fresh;
}

sample_outcome retime_one(sft_sample& s, evaluator& ev, const program_runner& runner) {
  sample_outcome out;
  if (!timed_label(s)) return out;
  const sft_candidate* best = recorded_best(s);
  const csr_matrix m = to_matrix(s);
  const std::vector<expert_config> fresh = missing_candidates(s, m);
  if (fresh.empty()) {
    out.kind = fate::up_to_date;
    return out;
  }
  // The recorded best again, in this run: the scale between then and now.
  const eval_task task{s.op, &m, s.k, "retime:" + s.name};
  const parse_result label = parse_completion(s.code, s.op);
  const verdict again = label.program ? ev.evaluate_program(task, *label.program) : verdict{};
  if (!again.correct) {
    out.kind = fate::failed;
    out.warning =
        s.name + ": its label " + best->program + " " +
        (label.program ? "failed now: " + again.failure : "does not parse: " + label.error) +
        "; left as it was";
    return out;
  }
  if (!again.kernel_ms || *again.kernel_ms <= 0) throw error(retime_timing_error(runner));
  const double scale = *best->time_ms / *again.kernel_ms;
  const double recorded_ms = *best->time_ms;
  std::optional<kernel_program> faster;
  double fastest_ms = recorded_ms;
  for (const expert_config& c : fresh) {
    const kernel_program program = emit_program(c);
    const verdict v = ev.evaluate_program(task, program);
    sft_candidate cand;
    cand.program = c.describe();
    cand.correct = v.correct;
    cand.speedup = v.speedup;
    if (v.kernel_ms) cand.time_ms = *v.kernel_ms * scale;
    if (cand.correct && cand.time_ms && *cand.time_ms < fastest_ms)
      fastest_ms = *cand.time_ms, faster = program;
    s.candidates.push_back(cand);
    ++out.new_candidates;
  }
  rank(s.candidates);
  s.extra["retime_scale"] = scale;
  out.kind = fate::retimed;
  if (faster) {
    s.code = faster->to_text();
    s.format = format_name(faster->format);
    out.kind = fate::relabelled;
  }
  return out;
}

}  // namespace

std::string retime_timing_error(const program_runner& runner) {
  return std::string("dataset retime: the ") + runner.name() +
         " runner measures no kernel time; retiming needs a GPU (--device gpu)";
}

retime_plan plan_retime(const std::vector<sft_sample>& samples, int threads) {
  std::vector<std::vector<expert_config>> missing(samples.size());
  parallel_for(samples.size(), threads, [&](size_t i) {
    if (timed_label(samples[i])) missing[i] = missing_candidates(samples[i], to_matrix(samples[i]));
  });
  retime_plan plan;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!timed_label(samples[i])) {
      ++plan.not_timed;
      continue;
    }
    ++plan.labels;
    if (missing[i].empty()) ++plan.up_to_date;
    plan.new_candidates += static_cast<int64_t>(missing[i].size());
    for (const expert_config& c : missing[i]) ++plan.by_template[c.name];
  }
  return plan;
}

retime_result retime_labels(std::vector<sft_sample> samples, program_runner& runner,
                            const eval_options& eval, const retime_options& options) {
  evaluator ev(runner, eval);
  std::vector<sample_outcome> outcomes(samples.size());
  progress_bar bar("retiming", static_cast<int64_t>(samples.size()), options.progress);
  const auto start = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
    return options.time_limit_s > 0 && spent.count() > options.time_limit_s;
  };
  parallel_for(samples.size(), options.threads, [&](size_t i) {
    if (out_of_time() && timed_label(samples[i]))
      outcomes[i].kind = fate::not_reached;
    else
      outcomes[i] = retime_one(samples[i], ev, runner);
    bar.advance();
  });
  bar.finish();
  retime_result r;
  for (const sample_outcome& o : outcomes) {
    r.new_candidates += o.new_candidates;
    switch (o.kind) {
      case fate::not_timed:
        ++r.not_timed;
        break;
      case fate::up_to_date:
        ++r.up_to_date;
        break;
      case fate::relabelled:
        ++r.relabelled, ++r.retimed;
        break;
      case fate::retimed:
        ++r.retimed;
        break;
      case fate::failed:
        ++r.failed, r.warnings.push_back(o.warning);
        break;
      case fate::not_reached:
        ++r.not_reached;
        break;
    }
  }
  r.samples = std::move(samples);
  return r;
}

}  // namespace sparserl::train
