#pragma once
// Trainer checkpoints: everything a run needs to continue exactly where it stopped (trainable
// tensors, optimizer state, RNG state, step, data position and trainer scalars) in one directory
// per step, RUN/checkpoints/step-000042/. A checkpoint is written into a temp directory and
// renamed into place only when complete, with a manifest of every file's size and CRC-32 written
// last, so a crash at any moment leaves the previous checkpoint loadable and a later corruption
// is detected before anything is loaded.
#include <torch/types.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace sparserl::train {

struct checkpoint_contents {
  int64_t step = 0;
  std::map<std::string, torch::Tensor> tensors;     // trainable weights, by name
  nlohmann::json state = nlohmann::json::object();  // data position, KL coefficient, config, ...
};

class checkpoint_store {
 public:
  // `dir` is created when missing. keep_last <= 0 keeps every checkpoint.
  checkpoint_store(std::string dir, int keep_last);

  // Writes step-<step>/ (tensors, optimizer, torch's CPU/CUDA generator states, state.json,
  // manifest.json) and then drops the oldest checkpoints beyond keep_last. Returns its path.
  std::string save(const checkpoint_contents& contents, const torch::optim::Optimizer& optimizer);

  // Complete checkpoints, oldest first (temp directories of interrupted saves are skipped).
  std::vector<std::string> list() const;
  std::optional<std::string> latest() const;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int keep_last_;
};

// Verifies the manifest (every file present, same size and CRC-32) and loads the checkpoint at
// `path`: fills `optimizer` (whose parameters must be the same tensors in the same order as when
// saved), restores the generator states and returns the tensors and state. Throws sparserl::error
// naming the file on anything missing, truncated or altered; nothing is changed then.
checkpoint_contents load_checkpoint(const std::string& path, torch::optim::Optimizer& optimizer);

// Copies `loaded` into `params` by name (same shapes), without recording autograd history.
void restore_tensors(const std::map<std::string, torch::Tensor>& loaded,
                     const std::map<std::string, torch::Tensor>& params, const std::string& path);

}  // namespace sparserl::train
