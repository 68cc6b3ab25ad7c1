#include "eval/autotune.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "kernel/heuristic.h"
#include "sparse/features.h"

namespace sparserl {

namespace {

bool same_config(const expert_config& a, const expert_config& b) {
  return a.name == b.name && a.format_params == b.format_params && a.params == b.params;
}

// Correct before failing; among correct, faster first (untimed ones keep their order).
bool ranks_before(const tuned_candidate& a, const tuned_candidate& b) {
  if (a.result.correct != b.result.correct) return a.result.correct;
  if (!a.result.correct) return false;
  const double ta = a.result.kernel_ms.value_or(0), tb = b.result.kernel_ms.value_or(0);
  return ta < tb;
}

}  // namespace

const tuned_candidate* tune_result::best() const {
  return !ranked.empty() && ranked.front().result.correct ? &ranked.front() : nullptr;
}

tune_result autotune(evaluator& eval, const eval_task& task, int threads) {
  const auto t0 = std::chrono::steady_clock::now();
  const matrix_features features = compute_features(*task.matrix);
  tune_result out;
  out.heuristic = pick_heuristic(task.op, features, task.k);
  const std::vector<expert_config> space = tuning_space(task.op, features, task.k);

  std::vector<tuned_candidate> candidates(space.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < space.size(); i = next++) {
      candidates[i].config = space[i];
      candidates[i].program = emit_program(space[i]);
      candidates[i].result = eval.evaluate_program(task, candidates[i].program);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();

  std::stable_sort(candidates.begin(), candidates.end(), ranks_before);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].result.correct) ++out.correct;
    if (same_config(candidates[i].config, out.heuristic)) out.heuristic_rank = i;
  }
  out.ranked = std::move(candidates);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace sparserl
