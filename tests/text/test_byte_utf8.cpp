// The byte-level map (GPT-2's) and the UTF-8 repair that decode uses (Unicode's "maximal
// subpart" practice, the one Rust's from_utf8_lossy and Python's errors="replace" follow).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "text/byte_level.h"
#include "text/utf8.h"

namespace sparserl::text {
namespace {

TEST(byte_level, maps_256_bytes_to_distinct_printable_characters_and_back) {
  std::set<std::string> seen;
  std::string all, mapped;
  for (int b = 0; b < 256; ++b) {
    const std::string& c = byte_char(static_cast<unsigned char>(b));
    ASSERT_TRUE(c.size() == 1 || c.size() == 2) << b;
    EXPECT_EQ(find_invalid_utf8(c), std::string::npos) << b;
    seen.insert(c);
    all += static_cast<char>(b);
  }
  EXPECT_EQ(seen.size(), 256u);
  append_byte_chars(all, mapped);
  std::string back;
  ASSERT_TRUE(append_chars_as_bytes(mapped, back));
  EXPECT_EQ(back, all);
}

TEST(byte_level, uses_gpt2s_well_known_characters) {
  EXPECT_EQ(byte_char(' '), "\xC4\xA0");   // U+0120 'Ġ'
  EXPECT_EQ(byte_char('\n'), "\xC4\x8A");  // U+010A 'Ċ'
  EXPECT_EQ(byte_char('a'), "a");
  EXPECT_EQ(byte_char(0xE9), "\xC3\xA9");  // printable Latin-1 maps to itself
  EXPECT_EQ(byte_char(0xAD), "\xC5\x83");  // the soft hyphen is the last remapped: U+0143
}

TEST(byte_level, characters_outside_the_map_leave_the_output_alone) {
  std::string out = "keep";
  EXPECT_FALSE(append_chars_as_bytes("a b", out));           // a plain space is not in the map
  EXPECT_FALSE(append_chars_as_bytes("\xE4\xB8\xAD", out));  // nor is any 3-byte character
  EXPECT_EQ(out, "keep");
}

TEST(utf8, finds_the_first_ill_formed_sequence) {
  EXPECT_EQ(find_invalid_utf8("plain ascii"), std::string::npos);
  EXPECT_EQ(find_invalid_utf8("\xF0\x9F\x9A\x80 rocket \xE4\xB8\xAD"), std::string::npos);
  EXPECT_EQ(find_invalid_utf8("ab\xC0\xAF"), 2u);          // overlong
  EXPECT_EQ(find_invalid_utf8("x\xED\xA0\x80"), 1u);       // a surrogate
  EXPECT_EQ(find_invalid_utf8("xy\xF4\x90\x80\x80"), 2u);  // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("abc\xE4\xB8"), 3u);         // truncated at the end
}

TEST(utf8, replaces_maximal_subparts_as_the_unicode_standard_shows) {
  // The example of Unicode 15 section 3.9 (U+FFFD substitution of maximal subparts):
  // 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a FFFD FFFD FFFD b FFFD c FFFD FFFD d.
  const std::string bad("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64", 13);
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(to_valid_utf8(bad), "a" + r + r + r + "b" + r + "c" + r + r + "d");
  EXPECT_EQ(to_valid_utf8("fine \xC3\xA9"), "fine \xC3\xA9");
}

}  // namespace
}  // namespace sparserl::text
