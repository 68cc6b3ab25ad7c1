#include "train/rollout_log.h"

#include <optional>
#include <sstream>

#include "kernel/expert_library.h"
#include "kernel/program_identity.h"
#include "sparse/content_hash.h"
#include "sparse/error.h"

namespace sparserl::train {

namespace {

// Whether `program` is what emit_program writes for `description` (comments and spacing aside).
bool is_expert_program(const std::string& description, const std::string& program, sparse_op op) {
  const std::optional<expert_config> c = parse_expert_description(description);
  if (!c) return false;
  try {
    return program_identity(emit_program(*c).to_text(), op) == program_identity(program, op);
  } catch (const error&) {  // values the template refuses: not that config's program
    return false;
  }
}

}  // namespace

std::string program_label(const std::string& program, sparse_op op) {
  const std::string described = expert_description(program);
  if (!described.empty() && is_expert_program(described, program, op)) return described;
  std::istringstream in(program);
  std::string header;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("FORMAT:", 0) == 0 || line.rfind("LAUNCH", 0) == 0)
      header += (header.empty() ? "" : "; ") + line;
  if (header.empty()) return "(no program)";
  return described.empty() ? header : header + " (edited from " + described + ")";
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
    const ppo_task& task = tasks[static_cast<size_t>(r.task_index[i])];
    nlohmann::json j = {{"task", task.id},
                        {"group", r.group[i]},
                        {"program", program_label(text, task.op)},
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
