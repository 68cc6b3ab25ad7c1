#include "train/rollout_judge.h"

#include <map>
#include <utility>

#include "kernel/program_identity.h"
#include "train/parallel_for.h"

namespace sparserl::train {

std::vector<size_t> distinct_rollouts(const rollouts& r, const std::vector<ppo_task>& tasks) {
  std::vector<size_t> first(r.generations.size());
  std::map<std::pair<int64_t, std::string>, size_t> seen;
  for (size_t i = 0; i < r.generations.size(); ++i) {
    const sparse_op op = tasks[static_cast<size_t>(r.task_index[i])].op;
    first[i] = seen.try_emplace({r.task_index[i], program_identity(r.generations[i].text, op)}, i)
                   .first->second;
  }
  return first;
}

std::vector<verdict> judge_rollouts(evaluator& judge, const std::vector<ppo_task>& tasks,
                                    const rollouts& r, int threads) {
  const size_t n = r.generations.size();
  const std::vector<size_t> first = distinct_rollouts(r, tasks);
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
