#pragma once
// Added tokens (tokenizer.json "added_tokens"): matched in the text before the pre-tokenizer, so
// "<|im_end|>" is one id however the regex would cut it. As in HF: leftmost-longest matching;
// tokens with normalized=false are found in the raw text, the others in the normalized pieces;
// single_word, lstrip and rstrip adjust or discard a match; `special` marks what decode may skip.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sparserl::text {

class normalizer;

struct added_token {
  int32_t id = -1;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

// A piece of text: an added token (id >= 0) or plain text for the next stage (id == -1).
struct text_segment {
  size_t begin;
  size_t end;
  int32_t id;
};

class added_vocabulary {
 public:
  added_vocabulary() = default;
  // Token ids are given; normalized tokens are matched through `norm` applied to their content.
  added_vocabulary(std::vector<added_token> tokens, const normalizer& norm);

  // Cuts `text` at the tokens of one set: the raw set (normalized=false) or the normalized set.
  // With skip_special, special tokens are left in the text (HF's encode_special_tokens).
  void split(std::string_view text, bool normalized_set, bool skip_special,
             std::vector<text_segment>& out) const;

  const added_token* find(std::string_view content) const;
  const added_token* find(int32_t id) const;
  const std::vector<added_token>& tokens() const { return tokens_; }
  bool is_special(std::string_view content) const;

 private:
  struct pattern {
    std::string text;
    size_t token;  // index into tokens_
  };
  struct matcher {
    // Patterns by first byte, longest first: the first that matches at a position is the
    // leftmost-longest match.
    std::vector<std::vector<pattern>> by_first_byte = std::vector<std::vector<pattern>>(256);
    bool empty = true;
    void add(std::string text, size_t token);
  };
  std::optional<text_segment> accept(std::string_view text, size_t begin, size_t end,
                                     size_t covered, const added_token& t) const;

  std::vector<added_token> tokens_;
  std::unordered_map<std::string, size_t> by_content_;
  std::unordered_map<int32_t, size_t> by_id_;
  matcher raw_, normalized_;
};

}  // namespace sparserl::text
