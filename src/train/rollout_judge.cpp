#include "train/rollout_judge.h"

#include <algorithm>
#include <future>
#include <map>
#include <utility>

namespace sparserl::train {

std::vector<size_t> distinct_rollouts(const rollouts& r) {
  std::vector<size_t> first(r.generations.size());
  std::map<std::pair<int64_t, const std::string*>, size_t,
           bool (*)(const std::pair<int64_t, const std::string*>&,
                    const std::pair<int64_t, const std::string*>&)>
      seen([](const std::pair<int64_t, const std::string*>& a,
              const std::pair<int64_t, const std::string*>& b) {
        return a.first != b.first ? a.first < b.first : *a.second < *b.second;
      });
  for (size_t i = 0; i < r.generations.size(); ++i)
    first[i] = seen.try_emplace({r.task_index[i], &r.generations[i].text}, i).first->second;
  return first;
}

std::vector<verdict> judge_rollouts(evaluator& judge, const std::vector<ppo_task>& tasks,
                                    const rollouts& r, int threads) {
  const size_t n = r.generations.size();
  const std::vector<size_t> first = distinct_rollouts(r);
  std::vector<size_t> judged;  // the rows whose programs are run: one per distinct program
  for (size_t i = 0; i < n; ++i)
    if (first[i] == i) judged.push_back(i);
  std::vector<verdict> out(n);
  std::vector<std::future<void>> workers;
  const size_t m = judged.size();
  const size_t per = (m + static_cast<size_t>(std::max(1, threads)) - 1) /
                     static_cast<size_t>(std::max(1, threads));
  for (size_t start = 0; start < m; start += per) {
    workers.push_back(std::async(std::launch::async, [&, start] {
      for (size_t j = start; j < std::min(m, start + per); ++j) {
        const size_t i = judged[j];
        const ppo_task& t = tasks[static_cast<size_t>(r.task_index[i])];
        eval_task et{t.op, &t.matrix, t.k, t.id};
        out[i] = judge.evaluate(et, r.generations[i].text);
      }
    }));
  }
  for (auto& w : workers) w.get();
  for (size_t i = 0; i < n; ++i)
    if (first[i] != i) out[i] = out[first[i]];
  return out;
}

}  // namespace sparserl::train
