#include "text/utf8.h"

namespace sparserl::text {

namespace {

// Length of the well-formed sequence at s[pos] (> 0), or minus the length of its maximal
// ill-formed subpart (< 0). Table 3-7 of the Unicode standard gives the second-byte ranges.
int sequence_at(std::string_view s, size_t pos) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  if (b0 < 0x80) return 1;
  int need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;
  }
  int got = 0;
  while (got < need && pos + 1 + got < s.size()) {
    const auto b = static_cast<unsigned char>(s[pos + 1 + got]);
    if (b < lo || b > hi) break;
    lo = 0x80;
    hi = 0xBF;
    ++got;
  }
  return got == need ? need + 1 : -(got + 1);
}

}  // namespace

size_t find_invalid_utf8(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    if (static_cast<unsigned char>(s[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const int n = sequence_at(s, pos);
    if (n < 0) return pos;
    pos += static_cast<size_t>(n);
  }
  return std::string_view::npos;
}

std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    const int n = sequence_at(s, pos);
    if (n > 0) {
      out.append(s.substr(pos, static_cast<size_t>(n)));
      pos += static_cast<size_t>(n);
    } else {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      pos += static_cast<size_t>(-n);
    }
  }
  return out;
}

}  // namespace sparserl::text
