#pragma once
// A byte-level BPE tokenizer read from a HF tokenizer.json, giving the ids HF `tokenizers` gives
// for the files Qwen2/Qwen3 ship (and others built from the same parts). The pipeline is HF's:
//   raw added tokens -> normalizer -> normalized added tokens -> pre_tokenizer -> BPE model
//   -> post_processor (when add_special_tokens).
// Every bad file or unsupported component is a sparserl::error naming the file and the field.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/added_vocabulary.h"

namespace sparserl::text {

class bpe_tokenizer {
 public:
  // `path` is a tokenizer.json or a directory holding one. A tokenizer_config.json beside it,
  // when present, names eos / pad / bos / unk (as strings or {"content": ...}).
  static bpe_tokenizer load(const std::filesystem::path& path);
  // The tokenizer.json text itself; `origin` prefixes error messages.
  static bpe_tokenizer from_json_text(std::string_view json, const std::string& origin);

  bpe_tokenizer(bpe_tokenizer&&) noexcept;
  bpe_tokenizer& operator=(bpe_tokenizer&&) noexcept;
  ~bpe_tokenizer();

  // `text` must be valid UTF-8 (else sparserl::error with the byte offset; see utf8.h's
  // to_valid_utf8). Thread-safe.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const;
  // Parallel over texts (OpenMP); result i is encode(texts[i]).
  std::vector<std::vector<int32_t>> encode_batch(const std::vector<std::string>& texts,
                                                 bool add_special_tokens = true) const;
  // Unknown ids are skipped and ill-formed UTF-8 becomes U+FFFD, as HF does.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;
  std::vector<std::string> decode_batch(const std::vector<std::vector<int32_t>>& ids,
                                        bool skip_special_tokens = false) const;

  // Distinct tokens, added ones included (HF's get_vocab_size(with_added_tokens=true)).
  size_t vocab_size() const;
  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(int32_t id) const;
  bool is_special(int32_t id) const;
  const std::vector<added_token>& added_tokens() const;

  // From tokenizer_config.json when it names them; otherwise eos is "<|endoftext|>" (or "</s>")
  // when the vocab has it, pad falls back to eos, bos and unk stay empty.
  std::optional<int32_t> eos_id() const { return eos_; }
  std::optional<int32_t> pad_id() const { return pad_; }
  std::optional<int32_t> bos_id() const { return bos_; }
  std::optional<int32_t> unk_id() const { return unk_; }

  // HF's encode_special_tokens: when true, special tokens in the text are encoded as plain text.
  void set_encode_special_tokens(bool on) { encode_special_tokens_ = on; }

 private:
  struct parts;
  explicit bpe_tokenizer(std::unique_ptr<parts> p);
  void read_config(const std::filesystem::path& config_path);
  void default_special_ids();
  void encode_plain(std::string_view text, std::vector<int32_t>& ids) const;

  std::unique_ptr<parts> parts_;
  std::optional<int32_t> eos_, pad_, bos_, unk_;
  bool encode_special_tokens_ = false;
};

}  // namespace sparserl::text
