#pragma once
// The tokenizer.json "pre_tokenizer": splits normalized text into the words BPE runs on.
// Supported: Split (Regex or String pattern, every HF behaviour, invert), ByteLevel
// (add_prefix_space, use_regex with GPT-2's pattern) and Sequence of these; null keeps the text
// whole. Qwen2/Qwen3 use Sequence[Split(regex, Isolated), ByteLevel(use_regex=false)].
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "text/regex.h"

namespace sparserl::text {

// Qwen2's (and Qwen3's) split pattern, as in their tokenizer.json.
extern const char* const qwen2_split_pattern;
// GPT-2's pattern, which ByteLevel applies itself when use_regex is true.
extern const char* const gpt2_split_pattern;

enum class split_behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

class pre_tokenizer {
 public:
  pre_tokenizer() = default;

  // Throws sparserl::error for an unknown type, a bad behaviour or a pattern PCRE2 rejects.
  static pre_tokenizer from_json(const nlohmann::json& j);
  // Split(pattern, Isolated) then ByteLevel(add_prefix_space=false, use_regex=false): Qwen2's.
  static pre_tokenizer split_then_byte_level(std::string_view pattern);
  nlohmann::json to_json() const;

  // Replaces `words` with the non-empty words of `text` (valid UTF-8), in order; after a
  // ByteLevel step they are in the byte-level alphabet.
  void split(std::string_view text, std::vector<std::string>& words) const;

 private:
  struct step {
    enum kind_t { split, byte_level } kind;
    regex pattern;  // Split's, or GPT-2's for ByteLevel with use_regex
    bool literal = false;
    split_behavior behavior = split_behavior::isolated;
    bool invert = false;
    bool add_prefix_space = false;
    bool use_regex = false;
  };
  static void parse_into(const nlohmann::json& j, std::vector<step>& steps);
  static void run_split(const step& s, std::string_view piece, std::vector<std::string>& out);
  static void run_byte_level(const step& s, std::string_view piece, std::vector<std::string>& out);

  std::vector<step> steps_;
};

}  // namespace sparserl::text
