#include "train/training_loop.h"

#include "train/progress_bar.h"

namespace sparserl::train {

training_loop::training_loop(const run_options& run, const optimizer_options& optim,
                             optimizer_state& opt, std::string kind, int64_t examples)
    : run_(run),
      schedule_(make_schedule(optim, run.steps)),
      opt_(opt),
      kind_(std::move(kind)),
      dp_(run.parallel ? run.parallel : &alone_),
      store_(run.run_dir + "/checkpoints", run.keep_last),
      start_(resume_if_asked(run, store_, opt)) {
  dp_->broadcast_from_main(opt.params);  // identical starting weights, however each rank began
  order_.emplace(examples, run.seed, start_.state.value("samples_consumed", int64_t{0}));
  if (dp_->is_main()) metrics_.emplace(run.run_dir + "/metrics.jsonl", start_.step);
}

void training_loop::log(int64_t step, const nlohmann::json& metrics) {
  if (metrics_) metrics_->append(step, metrics);
}

void training_loop::run(const std::function<step_outcome(int64_t, double)>& step_fn,
                        const std::function<nlohmann::json()>& extra_state) {
  progress_bar bar(kind_, run_.steps, run_.progress && dp_->is_main());
  bar.update(start_.step);
  int64_t step = start_.step, this_process = 0;
  while (step < run_.steps && (run_.stop_after < 0 || this_process < run_.stop_after)) {
    const double lr = schedule_.at(step);
    set_learning_rate(*opt_.adamw, lr);
    const step_outcome out = step_fn(step, lr);
    ++step;
    ++this_process;
    log(step, out.metrics);
    bar.update(step, out.progress);
    if (((run_.checkpoint_every > 0 && step % run_.checkpoint_every == 0) || step == run_.steps) &&
        dp_->is_main()) {
      nlohmann::json state = extra_state ? extra_state() : nlohmann::json::object();
      state["samples_consumed"] = order_->consumed();
      state["kind"] = kind_;
      save_checkpoint(store_, step, opt_, state);
    }
  }
  bar.finish();
}

}  // namespace sparserl::train
