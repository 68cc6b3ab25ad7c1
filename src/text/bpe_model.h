#pragma once
// The tokenizer.json "model" of type BPE: vocabulary, ranked merges, and the HF merge loop
// (lowest rank first, leftmost on ties) over one pre-tokenized word, with a word cache.
// Merges load in both forms: the old "a b" strings and the newer ["a", "b"] pairs.
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sparserl::text {

struct bpe_options {
  std::optional<std::string> unk_token;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;  // a word that is itself in the vocab is one token (Llama 3 style)
};

class bpe_model {
 public:
  // Throws sparserl::error when a merge names a token the vocab lacks, ids clash, etc.
  bpe_model(std::unordered_map<std::string, int32_t> vocab,
            const std::vector<std::pair<std::string, std::string>>& merges, bpe_options options);
  ~bpe_model();
  bpe_model(bpe_model&&) noexcept;
  bpe_model& operator=(bpe_model&&) noexcept;

  // Reads {"type": "BPE", "vocab": {...}, "merges": [...], ...}.
  static bpe_model from_json(const nlohmann::json& model);

  // Appends the ids of `word` (already in the vocab's alphabet, e.g. byte-level characters).
  // Thread-safe.
  void tokenize(std::string_view word, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  const std::string* id_to_token(int32_t id) const;  // nullptr for an unknown id
  size_t size() const { return vocab_.size(); }

 private:
  struct merge {
    int32_t rank;
    int32_t new_id;
  };
  struct word_cache;
  static uint64_t pair_key(int32_t a, int32_t b) {
    return static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32 | static_cast<uint32_t>(b);
  }
  const merge* find_merge(int32_t a, int32_t b) const;
  void initial_symbols(std::string_view word, std::vector<int32_t>& ids) const;
  void merge_all(std::vector<int32_t>& ids) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> tokens_;  // by id; ids missing from the vocab hold no entry
  std::vector<bool> has_id_;
  std::unordered_map<uint64_t, merge> merges_;
  bpe_options options_;
  std::optional<int32_t> unk_id_;
  std::unique_ptr<word_cache> cache_;
};

}  // namespace sparserl::text
