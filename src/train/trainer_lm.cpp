#include "train/trainer_lm.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <chrono>
#include <optional>

#include "sparse/error.h"
#include "train/data_order.h"
#include "train/data_parallel.h"
#include "train/metrics_log.h"
#include "train/progress_bar.h"
#include "train/trainer_common.h"

namespace sparserl::train {
namespace {

struct lm_step_inputs {
  lm_batch batch;
  torch::Tensor prefix;  // undefined for text-only data
};

lm_step_inputs prepare(const policy& p, const lm_dataset& data,
                       const std::vector<lm_example>& examples, int64_t max_len) {
  lm_step_inputs in;
  std::vector<const matrix_encoding*> encodings;
  for (const lm_example& e : examples)
    if (e.prefix_index >= 0) encodings.push_back(&data.prefixes.at(e.prefix_index));
  if (!encodings.empty() && encodings.size() != examples.size())
    throw error("lm trainer: a batch mixes examples with and without a matrix prefix");
  const int64_t prefix_tokens = encodings.empty() ? 0 : p.prefix_tokens();
  in.batch = make_lm_batch(examples, p.pad_id(), max_len, prefix_tokens);
  if (!encodings.empty()) in.prefix = p.prefix(encodings);
  return in;
}

torch::Tensor batch_loss(const policy& p, const lm_step_inputs& in) {
  qwen3_forward_options fo;
  fo.prefix_embeds = in.prefix;
  fo.attention_mask = in.batch.attention_mask.to(p.device());
  torch::Tensor logits = p.model().forward(in.batch.input_ids.to(p.device()), fo);
  return lm_loss(logits, in.batch, in.prefix.defined() ? in.prefix.size(1) : 0);
}

std::vector<lm_example> pick(const std::vector<lm_example>& all, const std::vector<int64_t>& idx) {
  std::vector<lm_example> out;
  for (int64_t i : idx) out.push_back(all[static_cast<size_t>(i)]);
  return out;
}

}  // namespace

double evaluate_lm(const policy& p, const lm_dataset& data, const std::vector<lm_example>& examples,
                   int64_t batch_size, int64_t max_len, data_parallel* parallel) {
  if (examples.empty()) return -1;
  torch::NoGradGuard no_grad;
  double weighted = 0, tokens = 0;
  const size_t ranks = parallel ? static_cast<size_t>(parallel->world_size()) : 1;
  const size_t rank = parallel ? static_cast<size_t>(parallel->rank()) : 0;
  for (size_t start = rank * static_cast<size_t>(batch_size); start < examples.size();
       start += ranks * static_cast<size_t>(batch_size)) {
    const size_t end = std::min(examples.size(), start + static_cast<size_t>(batch_size));
    std::vector<lm_example> chunk(examples.begin() + static_cast<std::ptrdiff_t>(start),
                                  examples.begin() + static_cast<std::ptrdiff_t>(end));
    lm_step_inputs in = prepare(p, data, chunk, max_len);
    const double n = static_cast<double>(in.batch.trained_tokens);
    weighted += batch_loss(p, in).item<double>() * n;
    tokens += n;
  }
  if (parallel) {
    const std::vector<double> total = parallel->sum({weighted, tokens});
    weighted = total[0];
    tokens = total[1];
  }
  return tokens > 0 ? weighted / tokens : -1;
}

lm_train_result train_lm(policy& p, const lm_dataset& data, const lm_train_options& o) {
  if (data.train.empty()) throw error(o.kind + ": the training set is empty");
  const run_options& run = o.run;
  data_parallel alone;
  data_parallel& dp = run.parallel ? *run.parallel : alone;
  if (o.batch_size < dp.world_size())
    throw error(o.kind + ": --batch-size " + std::to_string(o.batch_size) +
                " is smaller than WORLD_SIZE " + std::to_string(dp.world_size()) +
                " (every rank needs a share of each batch)");
  optimizer_state opt = make_optimizer(p.trainable(false), o.optim);
  checkpoint_store store(run.run_dir + "/checkpoints", run.keep_last);
  const resume_point start = resume_if_asked(run, store, opt);
  dp.broadcast_from_main(opt.params);  // identical starting weights, however each rank began
  data_order order(static_cast<int64_t>(data.train.size()), run.seed,
                   start.state.value("samples_consumed", int64_t{0}));
  std::optional<metrics_log> metrics;  // rank 0 writes the run's files
  if (dp.is_main()) metrics.emplace(run.run_dir + "/metrics.jsonl", start.step);
  const lr_schedule schedule = make_schedule(o.optim, run.steps);

  lm_train_result result;
  if (start.step == 0 && !data.val.empty()) {  // the baseline the run's validation loss improves on
    result.first_val_loss = evaluate_lm(p, data, data.val, o.batch_size, o.max_len, &dp);
    if (metrics) metrics->append(0, {{"val_loss", result.first_val_loss}});
  }
  p.set_training(true);
  progress_bar bar(o.kind, run.steps, run.progress && dp.is_main());
  bar.update(start.step);
  int64_t step = start.step, this_process = 0;
  const auto state = [&] {
    return nlohmann::json{{"samples_consumed", order.consumed()}, {"kind", o.kind}};
  };
  while (step < run.steps && (run.stop_after < 0 || this_process < run.stop_after)) {
    const auto t0 = std::chrono::steady_clock::now();
    const double lr = schedule.at(step);
    set_learning_rate(*opt.adamw, lr);
    opt.adamw->zero_grad();
    double loss_sum = 0;
    int64_t tokens = 0;
    for (int64_t micro = 0; micro < o.grad_accum; ++micro) {
      const std::vector<int64_t> mine = dp.shard(order.next(o.batch_size));
      lm_step_inputs in = prepare(p, data, pick(data.train, mine), o.max_len);
      // This rank's share of the batch's trained tokens: the ranks' scaled losses add up to the
      // whole batch's mean loss (a factor of exactly 1 in a single process).
      const double local = static_cast<double>(in.batch.trained_tokens);
      const double share = dp.world_size() > 1 ? local / dp.sum({local})[0] : 1.0;
      torch::Tensor loss = batch_loss(p, in) * share;
      (loss / static_cast<double>(o.grad_accum)).backward();
      loss_sum += loss.item<double>();
      tokens += in.batch.input_ids.numel();
    }
    if (dp.world_size() > 1) {
      const std::vector<double> total = dp.sum({loss_sum, static_cast<double>(tokens)});
      loss_sum = total[0];
      tokens = static_cast<int64_t>(total[1]);
    }
    dp.sum_gradients(opt.params);
    const double grad_norm = clip_gradients(opt.params, o.optim.max_grad_norm);
    opt.adamw->step();
    ++step;
    ++this_process;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json m = {{"loss", loss_sum / static_cast<double>(o.grad_accum)},
                        {"lr", lr},
                        {"grad_norm", grad_norm},
                        {"tokens_per_s", static_cast<double>(tokens) / std::max(seconds, 1e-9)}};
    const bool last = step == run.steps;
    if ((o.eval_every > 0 && step % o.eval_every == 0) || last) {
      p.set_training(false);
      m["val_loss"] = evaluate_lm(p, data, data.val, o.batch_size, o.max_len, &dp);
      p.set_training(true);
      if (m["val_loss"].get<double>() >= 0) {
        result.last_val_loss = m["val_loss"];
      }
    }
    if (metrics) metrics->append(step, m);
    if (result.steps_done == 0) result.first_train_loss = m["loss"];
    result.last_train_loss = m["loss"];
    ++result.steps_done;
    bar.update(step, "loss " + std::to_string(m["loss"].get<double>()).substr(0, 6));
    if (((run.checkpoint_every > 0 && step % run.checkpoint_every == 0) || last) && dp.is_main())
      save_checkpoint(store, step, opt, state());
  }
  bar.finish();
  p.set_training(false);
  return result;
}

}  // namespace sparserl::train
