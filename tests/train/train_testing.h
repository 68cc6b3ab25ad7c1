#pragma once
// Shared by the trainer tests: a BPE tokenizer trained on the test's own texts, and a tiny
// randomly initialised policy over it, both in a temp directory removed at the end.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model/qwen3_init.h"
#include "text/bpe_trainer.h"
#include "train/policy.h"

namespace sparserl::testing {

class temp_dir {
 public:
  explicit temp_dir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("sparserl_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() { std::filesystem::remove_all(path_); }
  std::string str() const { return path_.string(); }
  std::string sub(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Trains a byte-level BPE of `vocab` tokens on `texts` into `dir`.
inline void train_test_tokenizer(const std::vector<std::string>& texts, const std::string& dir,
                                 int32_t vocab = 600) {
  text::bpe_trainer_options o;
  o.vocab_size = vocab;
  text::bpe_trainer trainer(o);
  for (const auto& t : texts) trainer.add_text(t);
  trainer.save(trainer.train(), dir);
}

inline train::policy tiny_policy(const std::string& tokenizer_dir, uint64_t seed, bool value_head,
                                 int max_nnz = 16) {
  train::policy_load_options o;
  o.seed = seed;
  o.with_value_head = value_head;
  o.encoding.max_nnz = max_nnz;
  o.encoding.dim = 16;
  const text::bpe_tokenizer tok = text::bpe_tokenizer::load(tokenizer_dir);
  return train::policy::create(tiny_qwen3_config(static_cast<int64_t>(tok.vocab_size())),
                               tokenizer_dir, o);
}

}  // namespace sparserl::testing
