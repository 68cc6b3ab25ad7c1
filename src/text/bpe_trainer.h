#pragma once
// Trains a byte-level BPE the way HF's BpeTrainer does (most frequent adjacent pair first, ties
// to the smaller pair of ids) over words cut like Qwen2's pipeline: special tokens out, NFC,
// Split(regex, Isolated), ByteLevel. save() writes a tokenizer.json with Qwen2's structure (and
// a tokenizer_config.json) that both bpe_tokenizer and HF `tokenizers` load.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "text/added_vocabulary.h"
#include "text/normalizer.h"
#include "text/pretokenizer.h"

namespace sparserl::text {

struct bpe_trainer_options {
  // Model vocab (256 bytes + merges) plus the special tokens, which get the last ids as in Qwen.
  int32_t vocab_size = 8192;
  std::string pattern = qwen2_split_pattern;
  std::vector<std::string> special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  int64_t min_frequency = 2;  // a pair seen fewer times is not merged
  bool nfc = true;
  std::string eos_token = "<|endoftext|>";  // for tokenizer_config.json (also the pad token)
  size_t max_file_bytes = size_t{256} << 20;
};

struct trained_bpe {
  std::vector<std::string> vocab;  // by id, in the byte-level alphabet
  std::vector<std::pair<std::string, std::string>> merges;
};

struct corpus_stats {
  size_t files = 0;
  size_t skipped_files = 0;  // binary (NUL bytes) or over max_file_bytes
  size_t bytes = 0;
};

class bpe_trainer {
 public:
  explicit bpe_trainer(bpe_trainer_options options);

  // Counts the words of `text` (ill-formed UTF-8 is replaced by U+FFFD first).
  void add_text(std::string_view text);
  // Every regular file under `dir`, recursively and in path order; hidden entries, binary files
  // and files over max_file_bytes are skipped; .gz files are read decompressed.
  corpus_stats add_directory(const std::filesystem::path& dir);

  size_t distinct_words() const { return word_counts_.size(); }
  trained_bpe train() const;
  // Writes dir/tokenizer.json and dir/tokenizer_config.json, each through temp file + rename.
  void save(const trained_bpe& bpe, const std::filesystem::path& dir) const;

 private:
  bpe_trainer_options options_;
  normalizer norm_;
  pre_tokenizer pre_;
  added_vocabulary specials_;
  std::unordered_map<std::string, int64_t> word_counts_;
};

}  // namespace sparserl::text
