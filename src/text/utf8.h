#pragma once
// UTF-8 checks shared by the tokenizer and the trainer. Decoding follows the Unicode "maximal
// subpart" rule (as Rust's String::from_utf8_lossy, which HF decode uses), so lossy output matches.
#include <cstddef>
#include <string>
#include <string_view>

namespace sparserl::text {

// Byte offset of the first ill-formed sequence, or npos when `s` is valid UTF-8.
size_t find_invalid_utf8(std::string_view s);

// `s` with each maximal ill-formed subpart replaced by U+FFFD.
std::string to_valid_utf8(std::string_view s);

// Bytes in the UTF-8 sequence that starts with `lead` (1 for continuation / invalid bytes).
inline size_t utf8_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

}  // namespace sparserl::text
