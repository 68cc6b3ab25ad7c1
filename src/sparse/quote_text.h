#pragma once
// Quoting untrusted text (model output) inside one-line error messages: bounded length,
// non-printable bytes escaped, so an error about a garbage completion stays readable.
#include <cstddef>
#include <string>
#include <string_view>

namespace sparserl {

// The bound for names read from files (tensor, module and config names): long enough for any
// real HF name, short enough to keep an error on one readable line.
inline constexpr size_t name_quote_bytes = 80;

// 'text' in single quotes, at most max_bytes of it, bytes outside printable ASCII as \xNN, and
// "..." when cut.
std::string quote_text(std::string_view text, size_t max_bytes = 40);
// The same without the quotes, for text that reads as part of the message ("block=abc").
std::string printable_text(std::string_view text, size_t max_bytes = 40);

}  // namespace sparserl
