#include "train/trainer_common.h"

#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <iostream>

namespace sparserl::train {

optimizer_state make_optimizer(std::map<std::string, torch::Tensor> named,
                               const optimizer_options& o) {
  optimizer_state out;
  out.named = std::move(named);
  for (auto& [name, t] : out.named) {
    if (!t.requires_grad()) t.set_requires_grad(true);
    out.params.push_back(t);
  }
  out.adamw = std::make_unique<torch::optim::AdamW>(
      out.params,
      torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).weight_decay(o.weight_decay));
  return out;
}

void set_learning_rate(torch::optim::AdamW& adamw, double lr) {
  for (auto& group : adamw.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

double clip_gradients(const std::vector<torch::Tensor>& params, double max_norm) {
  std::vector<torch::Tensor> with_grad;
  for (const auto& p : params)
    if (p.grad().defined()) with_grad.push_back(p);
  if (with_grad.empty()) return 0.0;
  if (max_norm > 0) return torch::nn::utils::clip_grad_norm_(with_grad, max_norm);
  double sum = 0;
  for (const auto& p : with_grad) sum += p.grad().to(torch::kFloat64).pow(2).sum().item<double>();
  return std::sqrt(sum);
}

resume_point resume_if_asked(const run_options& run, checkpoint_store& store,
                             optimizer_state& opt) {
  resume_point out;
  if (!run.resume) return out;
  std::optional<std::string> latest = store.latest();
  if (!latest) {
    std::cerr << "resume: no checkpoint in " << store.dir() << ", starting at step 0\n";
    return out;
  }
  checkpoint_contents c = load_checkpoint(*latest, *opt.adamw);
  restore_tensors(c.tensors, opt.named, *latest);
  out.step = c.step;
  out.state = c.state;
  std::cerr << "resume: continuing from " << *latest << " (step " << c.step << ")\n";
  return out;
}

void save_checkpoint(checkpoint_store& store, int64_t step, optimizer_state& opt,
                     const nlohmann::json& state) {
  checkpoint_contents c;
  c.step = step;
  c.tensors = opt.named;
  c.state = state;
  store.save(c, *opt.adamw);
}

}  // namespace sparserl::train
