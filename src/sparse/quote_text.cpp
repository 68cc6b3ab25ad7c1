#include "sparse/quote_text.h"

namespace sparserl {

std::string quote_text(std::string_view text, size_t max_bytes) {
  static const char* const hex = "0123456789abcdef";
  std::string out = "'";
  const size_t n = text.size() < max_bytes ? text.size() : max_bytes;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (n < text.size()) out += "...";
  out += "'";
  return out;
}

std::string printable_text(std::string_view text, size_t max_bytes) {
  const std::string quoted = quote_text(text, max_bytes);
  return quoted.substr(1, quoted.size() - 2);
}

}  // namespace sparserl
