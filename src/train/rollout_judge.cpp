#include "train/rollout_judge.h"

#include <map>
#include <string_view>
#include <utility>

#include "kernel/program_identity.h"
#include "train/parallel_for.h"

namespace sparserl::train {

std::vector<std::string> rollout_identities(const rollouts& r, const std::vector<ppo_task>& tasks) {
  std::vector<std::string> out;
  out.reserve(r.generations.size());
  for (size_t i = 0; i < r.generations.size(); ++i)
    out.push_back(
        program_identity(r.generations[i].text, tasks[static_cast<size_t>(r.task_index[i])].op));
  return out;
}

std::vector<size_t> distinct_rollouts(const rollouts& r,
                                      const std::vector<std::string>& identities) {
  std::vector<size_t> first(r.generations.size());
  std::map<std::pair<int64_t, std::string_view>, size_t> seen;
  for (size_t i = 0; i < r.generations.size(); ++i)
    first[i] = seen.try_emplace({r.task_index[i], identities[i]}, i).first->second;
  return first;
}

std::vector<verdict> judge_rollouts(evaluator& judge, const std::vector<ppo_task>& tasks,
                                    const rollouts& r, const std::vector<std::string>& identities,
                                    int threads) {
  const size_t n = r.generations.size();
  const std::vector<size_t> first = distinct_rollouts(r, identities);
  std::vector<size_t> judged;  // the rows whose programs are run: one per distinct program
  for (size_t i = 0; i < n; ++i)
    if (first[i] == i) judged.push_back(i);
  std::vector<verdict> out(n);
  parallel_for(judged.size(), threads, [&](size_t j) {
    const size_t i = judged[j];
    const ppo_task& t = tasks[static_cast<size_t>(r.task_index[i])];
    out[i] = judge.evaluate(eval_task{t.op, &t.matrix, t.k, t.id}, r.generations[i].text);
  });
  for (size_t i = 0; i < n; ++i)
    if (first[i] != i) out[i] = out[first[i]];
  return out;
}

}  // namespace sparserl::train
