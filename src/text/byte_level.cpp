#include "text/byte_level.h"

#include <array>
#include <cstdint>

namespace sparserl::text {

namespace {

constexpr int max_code = 256 + 68;  // the highest mapped code point is U+0143

bool maps_to_itself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

std::string utf8_of(int code) {
  std::string s;
  if (code < 0x80) {
    s += static_cast<char>(code);
  } else {  // every mapped code point is below U+0800: two bytes
    s += static_cast<char>(0xC0 | (code >> 6));
    s += static_cast<char>(0x80 | (code & 0x3F));
  }
  return s;
}

struct tables {
  std::array<std::string, 256> chars;
  std::array<int16_t, max_code> byte_of;  // -1 where the code point is not a mapped character

  tables() {
    byte_of.fill(-1);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const int code = maps_to_itself(b) ? b : next++;
      chars[b] = utf8_of(code);
      byte_of[code] = static_cast<int16_t>(b);
    }
  }
};

const tables& get_tables() {
  static const tables t;
  return t;
}

}  // namespace

const std::string& byte_char(unsigned char byte) { return get_tables().chars[byte]; }

void append_byte_chars(std::string_view bytes, std::string& out) {
  const tables& t = get_tables();
  for (const char c : bytes) out += t.chars[static_cast<unsigned char>(c)];
}

bool append_chars_as_bytes(std::string_view chars, std::string& out) {
  const tables& t = get_tables();
  const size_t start = out.size();
  for (size_t i = 0; i < chars.size();) {
    const auto b0 = static_cast<unsigned char>(chars[i]);
    int code = -1;
    if (b0 < 0x80) {
      code = b0;
      i += 1;
    } else if ((b0 & 0xE0) == 0xC0 && i + 1 < chars.size() &&
               (static_cast<unsigned char>(chars[i + 1]) & 0xC0) == 0x80) {
      code = ((b0 & 0x1F) << 6) | (static_cast<unsigned char>(chars[i + 1]) & 0x3F);
      i += 2;
    }
    if (code < 0 || code >= max_code || t.byte_of[code] < 0) {
      out.resize(start);
      return false;
    }
    out += static_cast<char>(t.byte_of[code]);
  }
  return true;
}

}  // namespace sparserl::text
