#pragma once
// A compiled PCRE2 pattern (UTF-8 + Unicode properties, JIT when the library has it) that lists
// its non-overlapping matches the way HF tokenizers' Oniguruma-based find_iter does.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sparserl::text {

struct match_span {
  size_t begin;
  size_t end;
};

class regex {
 public:
  // Throws sparserl::error naming the pattern, the offset and PCRE2's reason when it is invalid.
  // `literal` matches the text as is (HF's Split with a String pattern).
  explicit regex(std::string_view pattern, bool literal = false);

  // Appends the matches in `subject` (valid UTF-8) to `out`, left to right. An empty match right
  // after the previous match is skipped (one character on), as in Rust's regex iterators.
  void find_all(std::string_view subject, std::vector<match_span>& out) const;

  const std::string& pattern() const { return pattern_; }
  bool jit() const { return jit_; }

 private:
  struct code_deleter {
    void operator()(void* code) const;
  };
  std::string pattern_;
  std::shared_ptr<void> code_;  // pcre2_code_8, shared by copies (it is read-only after compile)
  bool jit_ = false;
};

}  // namespace sparserl::text
