#include "train/rollout_judge.h"

#include <algorithm>
#include <future>

namespace sparserl::train {

std::vector<verdict> judge_rollouts(evaluator& judge, const std::vector<ppo_task>& tasks,
                                    const rollouts& r, int threads) {
  const size_t n = r.generations.size();
  std::vector<verdict> out(n);
  std::vector<std::future<void>> workers;
  const size_t per = (n + static_cast<size_t>(std::max(1, threads)) - 1) /
                     static_cast<size_t>(std::max(1, threads));
  for (size_t start = 0; start < n; start += per) {
    workers.push_back(std::async(std::launch::async, [&, start] {
      for (size_t i = start; i < std::min(n, start + per); ++i) {
        const ppo_task& t = tasks[static_cast<size_t>(r.task_index[i])];
        eval_task et{t.op, &t.matrix, t.k, t.id};
        out[i] = judge.evaluate(et, r.generations[i].text);
      }
    }));
  }
  for (auto& w : workers) w.get();
  return out;
}

}  // namespace sparserl::train
