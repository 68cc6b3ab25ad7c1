#include "train/trainer_ppo.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>
#include <future>
#include <optional>
#include <thread>

#include "sparse/error.h"
#include "train/data_order.h"
#include "train/data_parallel.h"
#include "train/metrics_log.h"
#include "train/program_sampler.h"
#include "train/progress_bar.h"
#include "train/prompt.h"
#include "train/trainer_common.h"

namespace sparserl::train {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// One step's rollouts laid out for the forward passes: [prefix | prompt + response] right-padded;
// response token r of row i is predicted by the logits at position resp_pos[i][r].
struct rollouts {
  std::vector<int64_t> task_index;
  std::vector<generation> generations;
  torch::Tensor input_ids, attention_mask, resp_pos, resp_ids, resp_mask;
  torch::Tensor prefix;  // [b, p, hidden], no grad
};

void layout(rollouts& r, const std::vector<std::vector<int32_t>>& prompts, int64_t prefix_tokens,
            int32_t pad_id) {
  const int64_t b = static_cast<int64_t>(prompts.size());
  int64_t t = 1, rmax = 1;
  for (int64_t i = 0; i < b; ++i) {
    const int64_t n = static_cast<int64_t>(r.generations[i].ids.size());
    t = std::max<int64_t>(t, static_cast<int64_t>(prompts[i].size()) + n);
    rmax = std::max<int64_t>(rmax, n);
  }
  r.input_ids = torch::full({b, t}, pad_id, torch::kInt64);
  r.attention_mask = torch::zeros({b, prefix_tokens + t}, torch::kInt64);
  r.resp_pos = torch::zeros({b, rmax}, torch::kInt64);
  r.resp_ids = torch::full({b, rmax}, pad_id, torch::kInt64);
  r.resp_mask = torch::zeros({b, rmax}, torch::kFloat32);
  auto ids = r.input_ids.accessor<int64_t, 2>();
  auto mask = r.attention_mask.accessor<int64_t, 2>();
  auto pos = r.resp_pos.accessor<int64_t, 2>();
  auto rid = r.resp_ids.accessor<int64_t, 2>();
  auto rmask = r.resp_mask.accessor<float, 2>();
  for (int64_t i = 0; i < b; ++i) {
    const auto& prompt = prompts[i];
    const auto& resp = r.generations[i].ids;
    const int64_t lp = static_cast<int64_t>(prompt.size());
    for (int64_t j = 0; j < prefix_tokens; ++j) mask[i][j] = 1;
    for (int64_t j = 0; j < lp; ++j) ids[i][j] = prompt[j];
    for (size_t j = 0; j < resp.size(); ++j) ids[i][lp + static_cast<int64_t>(j)] = resp[j];
    for (int64_t j = 0; j < lp + static_cast<int64_t>(resp.size()); ++j)
      mask[i][prefix_tokens + j] = 1;
    for (int64_t j = 0; j < rmax; ++j) {
      const bool real = j < static_cast<int64_t>(resp.size());
      pos[i][j] = prefix_tokens + lp + (real ? j : 0) - 1;
      rid[i][j] = real ? resp[j] : pad_id;
      rmask[i][j] = real ? 1.0f : 0.0f;
    }
  }
}

struct response_outputs {
  torch::Tensor logprobs, values, entropy;
};

// Log-probs (and values, when a head is given) of the response tokens of rows `rows`.
response_outputs score_responses(const qwen3_model& model, const value_head* head,
                                 const rollouts& r, const torch::Tensor& rows,
                                 const torch::Tensor& prefix, bool adapters, bool want_entropy) {
  const torch::Device dev = prefix.device();
  qwen3_forward_options fo;
  fo.prefix_embeds = prefix;
  fo.attention_mask = r.attention_mask.index_select(0, rows).to(dev);
  fo.adapters_enabled = adapters;
  torch::Tensor hidden = model.forward_hidden(r.input_ids.index_select(0, rows).to(dev), fo);
  torch::Tensor pos = r.resp_pos.index_select(0, rows).to(dev);
  torch::Tensor picked =
      hidden.gather(1, pos.unsqueeze(-1).expand({pos.size(0), pos.size(1), hidden.size(2)}));
  torch::Tensor logits = model.lm_logits(picked);
  response_outputs out;
  out.logprobs = token_logprobs(logits, r.resp_ids.index_select(0, rows).to(dev));
  if (want_entropy) out.entropy = token_entropy(logits.detach());
  if (head) out.values = head->forward(picked);
  return out;
}

std::vector<verdict> judge_all(evaluator& judge, const std::vector<ppo_task>& tasks,
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

// The reward statistics over every rank's verdicts (counts summed across ranks first).
void fill_reward_stats(const std::vector<verdict>& v, ppo_step_stats& s, data_parallel& dp) {
  std::vector<double> t(8, 0.0);  // sum, squares, compiled, correct, extracted, speed, timed, n
  for (const verdict& x : v) {
    t[0] += x.reward;
    t[1] += x.reward * x.reward;
    t[2] += x.compiled;
    t[3] += x.correct;
    t[4] += x.extracted;
    if (x.correct && x.speedup) {
      t[5] += *x.speedup;
      t[6] += 1;
    }
  }
  t[7] = static_cast<double>(v.size());
  t = dp.sum(t);
  const double n = t[7];
  s.reward_mean = t[0] / n;
  s.reward_std = std::sqrt(std::max(0.0, t[1] / n - s.reward_mean * s.reward_mean));
  s.compile_rate = t[2] / n;
  s.correct_rate = t[3] / n;
  s.extract_rate = t[4] / n;
  s.mean_speedup = t[6] > 0 ? t[5] / t[6] : 0.0;
}

// The policy statistics averaged over the ranks (equal shares), the throughputs summed.
void reduce_update_stats(ppo_step_stats& s, data_parallel& dp) {
  if (dp.world_size() == 1) return;
  const double w = dp.world_size();
  const std::vector<double> t =
      dp.sum({s.kl, s.entropy, s.clip_fraction, s.approx_kl, s.policy_loss, s.value_loss,
              s.tokens_per_s, s.reward_evals_per_s, s.response_tokens});
  s.kl = t[0] / w;
  s.entropy = t[1] / w;
  s.clip_fraction = t[2] / w;
  s.approx_kl = t[3] / w;
  s.policy_loss = t[4] / w;
  s.value_loss = t[5] / w;
  s.tokens_per_s = t[6];
  s.reward_evals_per_s = t[7];
  s.response_tokens = t[8];
}

nlohmann::json to_json(const ppo_step_stats& s) {
  return {{"reward_mean", s.reward_mean},
          {"reward_std", s.reward_std},
          {"compile_rate", s.compile_rate},
          {"correct_rate", s.correct_rate},
          {"extract_rate", s.extract_rate},
          {"mean_speedup", s.mean_speedup},
          {"kl", s.kl},
          {"entropy", s.entropy},
          {"clip_fraction", s.clip_fraction},
          {"approx_kl", s.approx_kl},
          {"policy_loss", s.policy_loss},
          {"value_loss", s.value_loss},
          {"kl_coef", s.kl_coef},
          {"tokens_per_s", s.tokens_per_s},
          {"reward_evals_per_s", s.reward_evals_per_s},
          {"generation_s", s.generation_s},
          {"reward_s", s.reward_s},
          {"update_s", s.update_s},
          {"response_tokens", s.response_tokens}};
}

}  // namespace

ppo_task make_ppo_task(const policy& p, std::string id, csr_matrix matrix, sparse_op op,
                       int32_t k) {
  ppo_task t;
  t.id = std::move(id);
  t.op = op;
  t.k = k;
  t.encoding = p.encode(matrix);
  t.matrix = std::move(matrix);
  return t;
}

namespace {

struct ppo_context {
  policy& p;
  const std::vector<ppo_task>& tasks;
  evaluator& judge;
  const ppo_options& o;
  const qwen3_model* reference;  // null: the policy itself with adapters off
  optimizer_state& opt;
  kl_controller& kl;
  data_parallel& dp;
};

rollouts generate_rollouts(ppo_context& c, const std::vector<int64_t>& idx, int64_t step,
                           std::vector<std::vector<int32_t>>& prompts) {
  std::vector<program_request> requests;
  for (int64_t i : idx) {
    const ppo_task& t = c.tasks[static_cast<size_t>(i)];
    requests.push_back({t.op, t.k, &t.matrix, &t.encoding});
  }
  // Each rank samples its own stream (rank 0's is the single process's).
  const sampling_options sampling{c.o.temperature, c.o.top_k, c.o.top_p,
                                  c.o.run.seed * 1000003ull + static_cast<uint64_t>(step) +
                                      static_cast<uint64_t>(c.dp.rank()) * 0x9e3779b97f4a7c15ull};
  sampled_programs sampled = sample_programs(c.p, requests, c.o.max_new_tokens, sampling);
  rollouts r;
  r.task_index = idx;
  r.generations = std::move(sampled.generations);
  r.prefix = sampled.prefix;
  prompts = std::move(sampled.prompts);
  return r;
}

// Epochs of shuffled mini-batches over the rollouts; fills the loss statistics of `s`.
void update_policy(ppo_context& c, const rollouts& r, const torch::Tensor& old_logprobs,
                   const torch::Tensor& old_values, const gae_result& gae, int64_t step,
                   ppo_step_stats& s) {
  const int64_t b = static_cast<int64_t>(r.generations.size());
  // The mini-batch is global: each rank takes its share of it (every rank holds b rollouts).
  const int64_t mb = std::max<int64_t>(1, std::min(c.o.mini_batch / c.dp.world_size(), b));
  const torch::Device dev = c.p.device();
  double pl = 0, vl = 0, cf = 0, ak = 0;
  int updates = 0;
  // Dropout stays off (as TRL's PPOTrainer disables it): the ratio must compare like with like.
  for (int epoch = 0; epoch < c.o.ppo_epochs; ++epoch) {
    data_order order(
        b, c.o.run.seed + static_cast<uint64_t>(step) * 7919u + static_cast<uint64_t>(epoch));
    for (int64_t start = 0; start < b; start += mb) {
      std::vector<int64_t> pick = order.next(std::min(mb, b - start));
      torch::Tensor rows = torch::tensor(pick, torch::kInt64);
      torch::Tensor rows_dev = rows.to(dev);
      torch::Tensor prefix = r.prefix.index_select(0, rows_dev);
      response_outputs now =
          score_responses(c.p.model(), c.p.value(), r, rows, prefix, true, false);
      torch::Tensor mask = r.resp_mask.index_select(0, rows).to(dev);
      ppo_loss_terms terms =
          ppo_losses(now.logprobs, old_logprobs.index_select(0, rows_dev), now.values,
                     old_values.index_select(0, rows_dev), gae.advantages.index_select(0, rows_dev),
                     gae.returns.index_select(0, rows_dev), mask, c.o.clip);
      c.opt.adamw->zero_grad();
      (terms.loss / static_cast<double>(c.dp.world_size())).backward();
      c.dp.sum_gradients(c.opt.params);  // the mean of the ranks' gradients
      clip_gradients(c.opt.params, c.o.optim.max_grad_norm);
      c.opt.adamw->step();
      pl += terms.policy_loss.item<double>();
      vl += terms.value_loss.item<double>();
      cf += terms.clip_fraction.item<double>();
      ak += terms.approx_kl.item<double>();
      ++updates;
    }
  }
  s.policy_loss = pl / updates;
  s.value_loss = vl / updates;
  s.clip_fraction = cf / updates;
  s.approx_kl = ak / updates;
}

ppo_step_stats ppo_step(ppo_context& c, const std::vector<int64_t>& idx, int64_t step) {
  ppo_step_stats s;
  auto t0 = clock_type::now();
  std::vector<std::vector<int32_t>> prompts;
  rollouts r = generate_rollouts(c, idx, step, prompts);
  s.generation_s = seconds_since(t0);
  for (const auto& g : r.generations) s.response_tokens += static_cast<double>(g.ids.size());
  s.tokens_per_s = s.response_tokens / std::max(s.generation_s, 1e-9);
  layout(r, prompts, c.p.prefix_tokens(), c.p.pad_id());

  // The harness judges the programs while the old policy, values and reference are scored.
  auto t1 = clock_type::now();
  std::future<std::vector<verdict>> verdicts = std::async(
      std::launch::async, [&] { return judge_all(c.judge, c.tasks, r, c.o.reward_threads); });
  torch::Tensor all = torch::arange(static_cast<int64_t>(idx.size()), torch::kInt64);
  response_outputs old, ref;
  {
    torch::NoGradGuard no_grad;
    old = score_responses(c.p.model(), c.p.value(), r, all, r.prefix, true, true);
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
  torch::Tensor rewards = kl_shaped_rewards(scores, old.logprobs, ref.logprobs, mask, c.kl.value());
  gae_result gae =
      compute_gae(rewards, old.values, mask, c.o.gamma, c.o.lam, c.o.advantage_std_floor);
  update_policy(c, r, old.logprobs, old.values, gae, step, s);
  reduce_update_stats(s, c.dp);  // every rank's controller sees the same KL
  c.kl.update(s.kl, static_cast<int64_t>(idx.size()) * c.dp.world_size());
  s.update_s = seconds_since(t2);
  return s;
}

// A frozen copy of the weights, for the KL reference when every weight trains.
std::unique_ptr<qwen3_model> frozen_copy(const qwen3_model& m) {
  qwen3_weights w = m.weights();
  auto frozen = [](const torch::Tensor& t) { return t.detach().clone(); };
  w.embed_tokens = frozen(w.embed_tokens);
  w.norm = frozen(w.norm);
  w.lm_head = m.config().tie_word_embeddings ? w.embed_tokens : frozen(w.lm_head);
  for (auto& layer : w.layers)
    for (const qwen3_layer_tensor& t : qwen3_layer_tensors(m.config()))
      layer.*t.member = frozen(layer.*t.member);
  return std::make_unique<qwen3_model>(m.config(), std::move(w));
}

}  // namespace

ppo_result train_ppo(policy& p, const std::vector<ppo_task>& tasks, evaluator& judge,
                     const ppo_options& o) {
  if (tasks.empty()) throw error("train-ppo: no tasks (matrices) to train on");
  if (!p.value()) throw error("train-ppo: the policy has no value head");
  const run_options& run = o.run;
  data_parallel alone;
  data_parallel& dp = run.parallel ? *run.parallel : alone;
  if (o.batch_size % dp.world_size() != 0)
    throw error("train-ppo: --batch-size " + std::to_string(o.batch_size) +
                " is not a multiple of WORLD_SIZE " + std::to_string(dp.world_size()) +
                " (every rank takes an equal share of the rollouts)");
  // The reference is taken before a resume restores later weights: it is the starting policy.
  std::unique_ptr<qwen3_model> reference = p.model().has_lora() ? nullptr : frozen_copy(p.model());
  optimizer_state opt = make_optimizer(p.trainable(true, false), o.optim);
  checkpoint_store store(run.run_dir + "/checkpoints", run.keep_last);
  const resume_point start = resume_if_asked(run, store, opt);
  dp.broadcast_from_main(opt.params);
  kl_controller kl(start.state.value("kl_coef", o.kl_coef), o.target_kl, o.kl_horizon);
  data_order order(static_cast<int64_t>(tasks.size()), run.seed,
                   start.state.value("samples_consumed", int64_t{0}));
  std::optional<metrics_log> metrics;  // rank 0 writes the run's files
  if (dp.is_main()) metrics.emplace(run.run_dir + "/metrics.jsonl", start.step);
  const lr_schedule schedule = make_schedule(o.optim, run.steps);
  ppo_context c{p, tasks, judge, o, reference.get(), opt, kl, dp};

  ppo_result result;
  progress_bar bar("ppo", run.steps, run.progress && dp.is_main());
  bar.update(start.step);
  p.set_training(false);
  int64_t step = start.step, this_process = 0;
  while (step < run.steps && (run.stop_after < 0 || this_process < run.stop_after)) {
    set_learning_rate(*opt.adamw, schedule.at(step));
    ppo_step_stats s = ppo_step(c, dp.shard(order.next(o.batch_size)), step);
    ++step;
    ++this_process;
    if (metrics) metrics->append(step, to_json(s));
    result.steps.push_back(s);
    bar.update(step, "reward " + std::to_string(s.reward_mean).substr(0, 6));
    if (((run.checkpoint_every > 0 && step % run.checkpoint_every == 0) || step == run.steps) &&
        dp.is_main())
      save_checkpoint(
          store, step, opt,
          {{"samples_consumed", order.consumed()}, {"kl_coef", kl.value()}, {"kind", "ppo"}});
  }
  bar.finish();
  return result;
}

}  // namespace sparserl::train
