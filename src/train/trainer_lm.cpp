#include "train/trainer_lm.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>

#include "sparse/error.h"
#include "train/data_parallel.h"
#include "train/trainer_common.h"
#include "train/training_loop.h"

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

torch::Tensor lm_examples_loss(const policy& p, const lm_dataset& data,
                               const std::vector<lm_example>& examples, int64_t max_len) {
  return batch_loss(p, prepare(p, data, examples, max_len));
}

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
  const int world = run.parallel ? run.parallel->world_size() : 1;
  if (o.batch_size < world)
    throw error(o.kind + ": --batch-size " + std::to_string(o.batch_size) +
                " is smaller than WORLD_SIZE " + std::to_string(world) +
                " (every rank needs a share of each batch)");
  optimizer_state opt = make_optimizer(p.trainable(false), o.optim);
  training_loop loop(run, o.optim, opt, o.kind, static_cast<int64_t>(data.train.size()));
  data_parallel& dp = loop.parallel();

  lm_train_result result;
  if (loop.start_step() == 0 && !data.val.empty()) {  // the baseline the val loss improves on
    result.first_val_loss = evaluate_lm(p, data, data.val, o.batch_size, o.max_len, &dp);
    loop.log(0, {{"val_loss", result.first_val_loss}});
  }
  p.set_training(true);
  loop.run([&](int64_t step, double lr) {
    const auto t0 = std::chrono::steady_clock::now();
    opt.adamw->zero_grad();
    double loss_sum = 0;
    int64_t tokens = 0;
    for (int64_t micro = 0; micro < o.grad_accum; ++micro) {
      const std::vector<int64_t> mine = dp.shard(loop.order().next(o.batch_size));
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
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    step_outcome out;
    const double loss = loss_sum / static_cast<double>(o.grad_accum);
    out.metrics = {{"loss", loss},
                   {"lr", lr},
                   {"grad_norm", grad_norm},
                   {"tokens_per_s", static_cast<double>(tokens) / std::max(seconds, 1e-9)}};
    const int64_t done = step + 1;
    // A run without validation data logs no val_loss at all (no placeholder value to plot).
    if (!data.val.empty() &&
        ((o.eval_every > 0 && done % o.eval_every == 0) || done == run.steps)) {
      p.set_training(false);
      result.last_val_loss = evaluate_lm(p, data, data.val, o.batch_size, o.max_len, &dp);
      out.metrics["val_loss"] = result.last_val_loss;
      p.set_training(true);
    }
    if (result.steps_done == 0) result.first_train_loss = loss;
    result.last_train_loss = loss;
    ++result.steps_done;
    out.progress = "loss " + std::to_string(loss).substr(0, 6);
    return out;
  });
  p.set_training(false);
  return result;
}

}  // namespace sparserl::train
