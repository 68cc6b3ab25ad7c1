#include "train/trainer_ppo.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <random>

#include "sparse/error.h"
#include "train/advantage_estimator.h"
#include "train/data_parallel.h"
#include "train/ppo_minibatches.h"
#include "train/program_sampler.h"
#include "train/reference_policy.h"
#include "train/rollout_judge.h"
#include "train/rollout_log.h"
#include "train/rollouts.h"
#include "train/trainer_common.h"
#include "train/trainer_lm.h"
#include "train/training_loop.h"

namespace sparserl::train {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct ppo_context {
  policy& p;
  const std::vector<ppo_task>& tasks;
  evaluator& judge;
  const ppo_options& o;
  const advantage_estimator& estimator;
  const qwen3_model* reference;  // null: the policy itself with adapters off
  optimizer_state& opt;
  kl_controller& kl;
  data_parallel& dp;
  metrics_log* rollout_log;  // RUN/rollouts.jsonl on rank 0, else null
  const lm_dataset* anchor;  // the SFT anchor's examples, or null
};

// The anchor examples of one update: o.sft_batch drawn from the anchor's train split, seeded by
// the update and the rank (the ranks draw different ones).
std::vector<lm_example> anchor_examples(const ppo_context& c, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(c.dp.rank()));
  std::uniform_int_distribution<size_t> any(0, c.anchor->train.size() - 1);
  std::vector<lm_example> out;
  for (int64_t i = 0; i < c.o.sft_batch; ++i) out.push_back(c.anchor->train[any(rng)]);
  return out;
}

// samples_per_task programs for each task of `idx`, consecutive rows, one group per task.
rollouts generate_rollouts(ppo_context& c, const std::vector<int64_t>& idx, int64_t step,
                           std::vector<std::vector<int32_t>>& prompts) {
  std::vector<program_request> requests;
  rollouts r;
  for (size_t j = 0; j < idx.size(); ++j) {
    const ppo_task& t = c.tasks[static_cast<size_t>(idx[j])];
    for (int64_t g = 0; g < c.o.samples_per_task; ++g) {
      requests.push_back({t.op, t.k, &t.input});
      r.task_index.push_back(idx[j]);
      r.group.push_back(static_cast<int64_t>(j));
    }
  }
  // Each rank samples its own stream (rank 0's is the single process's).
  const sampling_options sampling{c.o.temperature, c.o.top_k, c.o.top_p,
                                  c.o.run.seed * 1000003ull + static_cast<uint64_t>(step) +
                                      static_cast<uint64_t>(c.dp.rank()) * 0x9e3779b97f4a7c15ull};
  std::optional<sampling_options> header;  // its own stream, derived from the source's seed
  if (c.o.header_temperature > 0)
    header = sampling_options{c.o.header_temperature, 0, c.o.header_top_p,
                              sampling.seed ^ 0x5bd1e995ull};
  sampled_programs sampled = sample_programs(c.p, requests, c.o.max_new_tokens, sampling, header);
  r.generations = std::move(sampled.generations);
  r.prefix = sampled.prefix;
  prompts = std::move(sampled.prompts);
  return r;
}

// The most rollouts any rank uses in this step's update: every rank runs as many mini-batch
// updates (their gradients are summed together), a rank short of rollouts adding zeros.
int64_t most_used_over_ranks(int64_t used, data_parallel& dp) {
  if (dp.world_size() == 1) return used;
  std::vector<double> counts(static_cast<size_t>(dp.world_size()), 0.0);
  counts[static_cast<size_t>(dp.rank())] = static_cast<double>(used);
  counts = dp.sum(counts);
  return static_cast<int64_t>(*std::max_element(counts.begin(), counts.end()));
}

// Epochs of shuffled mini-batches over the rollouts the estimator kept; fills the loss
// statistics of `s`.
void update_policy(ppo_context& c, const rollouts& r, const torch::Tensor& old_logprobs,
                   const torch::Tensor& old_values, const advantage_result& adv, int64_t step,
                   ppo_step_stats& s) {
  const int64_t b = r.size();
  const int64_t used = static_cast<int64_t>(adv.used.size());
  const int64_t most = most_used_over_ranks(used, c.dp);
  // The mini-batch is global: each rank takes its share of it.
  const int64_t mb = std::max<int64_t>(1, std::min(c.o.mini_batch / c.dp.world_size(), b));
  const torch::Device dev = c.p.device();
  const value_head* head = c.estimator.uses_value_head() ? c.p.value() : nullptr;
  double pl = 0, vl = 0, cf = 0, ak = 0, sl = 0;
  int updates = 0;
  uint64_t update_seed = 0;
  // Dropout stays off (as TRL's PPOTrainer disables it): the ratio must compare like with like.
  for (int epoch = 0; epoch < c.o.ppo_epochs && most > 0; ++epoch) {
    const uint64_t seed =
        c.o.run.seed + static_cast<uint64_t>(step) * 7919u + static_cast<uint64_t>(epoch);
    for (const std::vector<int64_t>& pick : epoch_minibatches(adv.used, most, mb, seed)) {
      c.opt.adamw->zero_grad();
      if (!pick.empty()) {
        torch::Tensor rows = torch::tensor(pick, torch::kInt64);
        torch::Tensor rows_dev = rows.to(dev);
        torch::Tensor prefix = r.prefix.index_select(0, rows_dev);
        response_outputs now = score_responses(c.p.model(), head, r, rows, prefix, true, false);
        torch::Tensor mask = r.resp_mask.index_select(0, rows).to(dev);
        torch::Tensor values_old, returns;
        if (head) {
          values_old = old_values.index_select(0, rows_dev);
          returns = adv.returns.index_select(0, rows_dev);
        }
        ppo_loss_terms terms =
            ppo_losses(now.logprobs, old_logprobs.index_select(0, rows_dev), now.values, values_old,
                       adv.advantages.index_select(0, rows_dev), returns, mask, c.o.clip);
        (terms.loss / static_cast<double>(c.dp.world_size())).backward();
        if (c.anchor) {  // PPO-ptx: the SFT loss joins this update's gradient
          torch::Tensor anchor = lm_examples_loss(
              c.p, *c.anchor, anchor_examples(c, seed * 1000003u + update_seed), c.o.sft_max_len);
          (anchor * (c.o.sft_coef / static_cast<double>(c.dp.world_size()))).backward();
          sl += anchor.item<double>();
        }
        pl += terms.policy_loss.item<double>();
        vl += terms.value_loss.item<double>();
        cf += terms.clip_fraction.item<double>();
        ak += terms.approx_kl.item<double>();
        ++updates;
      }
      ++update_seed;
      c.dp.sum_gradients(c.opt.params);  // the mean of the ranks' gradients
      clip_gradients(c.opt.params, c.o.optim.max_grad_norm);
      c.opt.adamw->step();
    }
  }
  if (updates == 0) return;
  s.policy_loss = pl / updates;
  s.value_loss = vl / updates;
  s.clip_fraction = cf / updates;
  s.approx_kl = ak / updates;
  s.sft_loss = sl / updates;
  s.has_sft_loss = c.anchor != nullptr;  // a step without an update logs no anchor loss
}

ppo_step_stats ppo_step(ppo_context& c, const std::vector<int64_t>& idx, int64_t step) {
  ppo_step_stats s;
  auto t0 = clock_type::now();
  std::vector<std::vector<int32_t>> prompts;
  rollouts r = generate_rollouts(c, idx, step, prompts);
  s.generation_s = seconds_since(t0);
  for (const auto& g : r.generations) s.response_tokens += static_cast<double>(g.ids.size());
  s.tokens_per_s = s.response_tokens / std::max(s.generation_s, 1e-9);
  lay_out_rollouts(r, prompts, c.p.prefix_tokens(), c.p.pad_id());

  // The harness judges the programs while the old policy, values and reference are scored.
  auto t1 = clock_type::now();
  const std::vector<std::string> identities = rollout_identities(r, c.tasks);
  std::future<std::vector<verdict>> verdicts = std::async(std::launch::async, [&] {
    return judge_rollouts(c.judge, c.tasks, r, identities, c.o.reward_threads);
  });
  torch::Tensor all = torch::arange(r.size(), torch::kInt64);
  const value_head* head = c.estimator.uses_value_head() ? c.p.value() : nullptr;
  response_outputs old, ref;
  {
    torch::NoGradGuard no_grad;
    old = score_responses(c.p.model(), head, r, all, r.prefix, true, true);
    ref = score_responses(c.reference ? *c.reference : c.p.model(), nullptr, r, all, r.prefix,
                          c.reference != nullptr, false);
  }
  std::vector<verdict> v = verdicts.get();
  s.reward_s = seconds_since(t1);
  s.reward_evals_per_s = static_cast<double>(v.size()) / std::max(s.reward_s, 1e-9);
  fill_reward_stats(v, s, c.dp);

  auto t2 = clock_type::now();
  const torch::Device dev = c.p.device();
  torch::Tensor mask = r.resp_mask.to(dev);
  std::vector<float> score_values;
  for (const verdict& x : v) score_values.push_back(static_cast<float>(x.reward));
  torch::Tensor scores = torch::tensor(score_values).to(dev);
  torch::Tensor kl_tokens = (old.logprobs - ref.logprobs) * mask;
  s.kl = (kl_tokens.sum(1)).mean().item<double>();
  s.entropy = masked_mean(old.entropy, mask).item<double>();
  s.kl_coef = c.kl.value();
  const advantage_result adv = c.estimator.estimate(
      {scores, old.logprobs, ref.logprobs, old.values, mask, r.group, c.kl.value()});
  s.rollouts = static_cast<double>(r.size());
  s.groups = static_cast<double>(adv.groups);
  s.groups_tied = static_cast<double>(adv.groups_tied);
  s.rollouts_used = static_cast<double>(adv.used.size());
  if (c.rollout_log)
    for (const nlohmann::json& line :
         rollout_records(r, c.tasks, v, identities, adv.advantages, mask, adv.used))
      c.rollout_log->append(step + 1, line);  // step numbers as in metrics.jsonl
  update_policy(c, r, old.logprobs, old.values, adv, step, s);
  reduce_update_stats(s, c.dp);  // every rank's controller sees the same KL
  c.kl.update(s.kl, r.size() * c.dp.world_size());
  s.update_s = seconds_since(t2);
  return s;
}

}  // namespace

std::string advantage_name(const ppo_options& o) {
  if (!o.advantage.empty()) return o.advantage;
  return o.samples_per_task > 1 ? "rloo" : "gae";
}

void check_sft_anchor(bool has_anchor, const ppo_options& o) {
  if (has_anchor != (o.sft_coef > 0))
    throw error(has_anchor
                    ? "train-ppo: --sft-anchor needs --sft-coef > 0"
                    : "train-ppo: --sft-coef needs --sft-anchor (the SFT data to anchor to)");
  if (has_anchor && (o.sft_batch < 1 || o.sft_max_len < 2))
    throw error("train-ppo: --sft-batch must be at least 1 and --sft-max-len at least 2");
}

void check_ppo_sampling(const ppo_options& o) {
  validate(sampling_options{o.temperature, o.top_k, o.top_p, 0});
  if (!(o.header_top_p > 0.0 && o.header_top_p <= 1.0))
    throw error("train-ppo: --header-top-p " + std::to_string(o.header_top_p) +
                " must be in (0, 1]");
  if (o.header_temperature != 0 && o.temperature == 0)
    throw error("train-ppo: --header-temperature needs a sampled source (--temperature > 0)");
}

ppo_result train_ppo(policy& p, const std::vector<ppo_task>& tasks, evaluator& judge,
                     const ppo_options& o, const lm_dataset* sft_anchor) {
  if (tasks.empty()) throw error("train-ppo: no tasks (matrices) to train on");
  check_sft_anchor(sft_anchor != nullptr, o);
  check_ppo_sampling(o);
  if (sft_anchor && sft_anchor->train.empty())
    throw error("train-ppo: the SFT anchor (--sft-anchor) has no training examples");
  if (o.samples_per_task < 1)
    throw error("train-ppo: --samples-per-task must be at least 1, not " +
                std::to_string(o.samples_per_task));
  const std::unique_ptr<advantage_estimator> estimator =
      make_advantage_estimator(advantage_name(o), {o.gamma, o.lam, o.advantage_std_floor});
  if (!estimator->uses_value_head() && o.samples_per_task < 2)
    throw error(std::string("train-ppo: --advantage ") + estimator->name() +
                " compares the samples of a task: it needs --samples-per-task >= 2");
  if (estimator->uses_value_head() && !p.value())
    throw error("train-ppo: the policy has no value head");
  const run_options& run = o.run;
  const int world = run.parallel ? run.parallel->world_size() : 1;
  if (o.batch_size % world != 0)
    throw error("train-ppo: --batch-size " + std::to_string(o.batch_size) +
                " is not a multiple of WORLD_SIZE " + std::to_string(world) +
                " (every rank takes an equal share of the tasks)");
  // The reference is taken before a resume restores later weights: it is the starting policy.
  std::unique_ptr<qwen3_model> reference = make_reference_model(p.model());
  optimizer_state opt = make_optimizer(p.trainable(estimator->uses_value_head(), false), o.optim);
  training_loop loop(run, o.optim, opt, "ppo", static_cast<int64_t>(tasks.size()));
  data_parallel& dp = loop.parallel();
  kl_controller kl(loop.resumed_state().value("kl_coef", o.kl_coef), o.target_kl, o.kl_horizon);
  std::optional<metrics_log> rollout_log;
  if (dp.is_main()) rollout_log.emplace(run.run_dir + "/rollouts.jsonl", loop.start_step());
  ppo_context c{p,          tasks,
                judge,      o,
                *estimator, reference.get(),
                opt,        kl,
                dp,         rollout_log ? &*rollout_log : nullptr,
                sft_anchor};

  ppo_result result;
  p.set_training(false);
  loop.run(
      [&](int64_t step, double) {
        ppo_step_stats s = ppo_step(c, dp.shard(loop.order().next(o.batch_size)), step);
        result.steps.push_back(s);
        return step_outcome{to_json(s), "reward " + std::to_string(s.reward_mean).substr(0, 6)};
      },
      [&] {
        return nlohmann::json{{"kl_coef", kl.value()}};
      });
  return result;
}

}  // namespace sparserl::train
