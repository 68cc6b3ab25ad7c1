#pragma once
// A run's metrics as JSONL (RUN_DIR/metrics.jsonl): one object per logged step,
//   {"step": 12, "time": 1764700000.25, "loss": 1.83, "lr": 0.0003, ...}
// "time" is wall-clock Unix seconds; the other fields are the trainer's named scalars (numbers;
// NaN and infinities are written as null, which JSON requires). A step may have several lines
// (e.g. training scalars, then an evaluation). Each line is written with one write(2) and is in
// the file when append() returns, so `sparserl plot` and `tail -f` see it while the run goes on.
//
// Resuming: a checkpoint at step s is saved after step s's metrics were appended, so a run
// resumed from it keeps the lines of steps <= s and drops the later ones (written after the
// checkpoint, by the process that was killed), rewriting the file atomically; resume step 0 means
// no checkpoint, a fresh run, and starts an empty file. A line cut short by a crash is dropped too.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sparserl::train {

struct metrics_record {
  int64_t step = 0;
  double time = 0;
  nlohmann::json values = nlohmann::json::object();  // every field but step and time
};

class metrics_log {
 public:
  // Creates the file (and its directory) or truncates it for `resume_step` as above.
  metrics_log(std::string path, int64_t resume_step);
  ~metrics_log();
  metrics_log(const metrics_log&) = delete;
  metrics_log& operator=(const metrics_log&) = delete;

  // `scalars` must be an object whose fields are numbers, booleans, strings or null, none named
  // "step" or "time". Throws sparserl::error otherwise, or when the write fails.
  void append(int64_t step, const nlohmann::json& scalars);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// Every complete line of a metrics file, in order. A last line without its newline (a run still
// writing, or killed mid-line) is skipped; any other bad line is an error "<path>:<line>: <why>".
std::vector<metrics_record> read_metrics(const std::string& path);

// Keeps the lines with step <= last_step (all lines when none is later), drops the rest and any
// cut-off last line, atomically. A missing file stays missing.
void truncate_metrics(const std::string& path, int64_t last_step);

}  // namespace sparserl::train
