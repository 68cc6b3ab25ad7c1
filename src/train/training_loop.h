#pragma once
// The run loop every trainer shares (pre-training, SFT, PPO): resume from the run's latest
// checkpoint (weights, optimizer, RNG, data position), rank 0's weights to every rank, the
// scheduled learning rate, then step after step: the trainer's step, its metrics to
// RUN/metrics.jsonl, the progress bar, checkpoints every --checkpoint-every steps and at the end.
// A trainer supplies only what one step does.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "train/data_order.h"
#include "train/data_parallel.h"
#include "train/metrics_log.h"
#include "train/trainer_common.h"
#include "train/trainer_options.h"

namespace sparserl::train {

// What one step reports: its metrics (a JSON object of scalars) and the progress bar's text.
struct step_outcome {
  nlohmann::json metrics = nlohmann::json::object();
  std::string progress;
};

class training_loop {
 public:
  // Resumes into `opt` when run.resume asks, broadcasts rank 0's weights, positions the data
  // order over `examples` items and opens metrics.jsonl (rank 0). `kind` ("pretrain", "sft",
  // "ppo") names the progress bar and is kept in checkpoints.
  training_loop(const run_options& run, const optimizer_options& optim, optimizer_state& opt,
                std::string kind, int64_t examples);

  data_parallel& parallel() { return *dp_; }
  data_order& order() { return *order_; }
  int64_t start_step() const { return start_.step; }
  const nlohmann::json& resumed_state() const { return start_.state; }
  // Appends a metrics line (rank 0; a no-op on the other ranks).
  void log(int64_t step, const nlohmann::json& metrics);

  // Runs the remaining steps: sets the learning rate for step `s` (0-based), calls step(s, lr),
  // logs its metrics as step s + 1, and checkpoints (rank 0) with the data position, `kind` and
  // extra_state()'s fields. Stops early after run.stop_after steps of this process.
  void run(const std::function<step_outcome(int64_t step, double lr)>& step,
           const std::function<nlohmann::json()>& extra_state = {});

 private:
  const run_options& run_;
  lr_schedule schedule_;
  optimizer_state& opt_;
  std::string kind_;
  data_parallel alone_;
  data_parallel* dp_;
  checkpoint_store store_;
  resume_point start_;
  std::optional<data_order> order_;
  std::optional<metrics_log> metrics_;
};

}  // namespace sparserl::train
