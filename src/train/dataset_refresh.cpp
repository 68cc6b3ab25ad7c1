#include "train/dataset_refresh.h"

#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/features.h"
#include "train/parallel_for.h"

namespace sparserl::train {
namespace {

enum class outcome { refreshed, unchanged, not_found, no_expert };

outcome refresh_one(sft_sample& s) {
  const std::string wanted = expert_description(s.code);
  if (wanted.empty()) return outcome::no_expert;
  const std::optional<expert_config> c =
      find_in_tuning_space(s.op, compute_features(to_matrix(s)), s.k, wanted);
  if (!c) return outcome::not_found;
  const kernel_program p = emit_program(*c);
  const std::string text = p.to_text();
  if (text == s.code) return outcome::unchanged;
  s.code = text;
  s.format = format_name(p.format);
  return outcome::refreshed;
}

}  // namespace

refresh_result refresh_label_code(std::vector<sft_sample>& samples, int threads) {
  std::vector<outcome> outcomes(samples.size());
  parallel_for(samples.size(), threads, [&](size_t i) { outcomes[i] = refresh_one(samples[i]); });
  refresh_result r;
  for (outcome o : outcomes) {
    if (o == outcome::refreshed) ++r.refreshed;
    if (o == outcome::unchanged) ++r.unchanged;
    if (o == outcome::not_found) ++r.not_found;
    if (o == outcome::no_expert) ++r.no_expert;
  }
  return r;
}

}  // namespace sparserl::train
