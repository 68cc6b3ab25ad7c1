#include "train/rollout_log.h"

#include <sstream>

#include "kernel/expert_library.h"
#include "sparse/content_hash.h"

namespace sparserl::train {

std::string program_label(const std::string& program) {
  if (std::string expert = expert_description(program); !expert.empty()) return expert;
  std::istringstream in(program);
  std::string line, format, launch;
  while (std::getline(in, line)) {
    if (format.empty() && line.rfind("FORMAT:", 0) == 0) format = line;
    if (launch.empty() && line.rfind("LAUNCH:", 0) == 0) launch = line;
  }
  if (format.empty() && launch.empty()) return "(no program)";
  return format + (format.empty() || launch.empty() ? "" : "; ") + launch;
}

std::vector<nlohmann::json> rollout_records(const rollouts& r, const std::vector<ppo_task>& tasks,
                                            const std::vector<verdict>& verdicts,
                                            const std::vector<std::string>& identities,
                                            const torch::Tensor& advantages,
                                            const torch::Tensor& mask,
                                            const std::vector<int64_t>& used) {
  const torch::Tensor m = mask.to(torch::kCPU, torch::kFloat);
  const torch::Tensor per_row =
      ((advantages.to(torch::kCPU, torch::kFloat) * m).sum(1) / m.sum(1).clamp_min(1)).contiguous();
  const float* adv = per_row.data_ptr<float>();
  std::vector<bool> in_update(r.generations.size(), false);
  for (int64_t i : used) in_update[static_cast<size_t>(i)] = true;
  std::vector<nlohmann::json> out;
  for (size_t i = 0; i < r.generations.size(); ++i) {
    const std::string& text = r.generations[i].text;
    const verdict& v = verdicts[i];
    nlohmann::json j = {{"task", tasks[static_cast<size_t>(r.task_index[i])].id},
                        {"group", r.group[i]},
                        {"program", program_label(text)},
                        {"program_sha256", sha256_hex({identities[i]})},
                        {"extracted", v.extracted},
                        {"correct", v.correct},
                        {"speedup", v.speedup ? nlohmann::json(*v.speedup) : nlohmann::json()},
                        {"reward", v.reward},
                        {"advantage", adv[i]},
                        {"used", static_cast<bool>(in_update[i])},
                        {"failure", v.failure.substr(0, 120)}};
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace sparserl::train
