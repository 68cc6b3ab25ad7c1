#pragma once
// GPT-2's reversible byte <-> unicode map, which byte-level BPE (GPT-2, Qwen2/3) works in: every
// byte becomes one printable character, so a vocabulary of strings covers arbitrary bytes.
// Printable Latin-1 bytes map to themselves; the other 68 (controls, space, 0x7F-0xA0, 0xAD)
// map to U+0100.. in byte order, so the space 0x20 becomes 'Ġ' (U+0120) and '\n' becomes 'Ċ'.
#include <string>
#include <string_view>

namespace sparserl::text {

// The 256 characters, in byte order (each a 1- or 2-byte UTF-8 string).
const std::string& byte_char(unsigned char byte);

// Appends the mapped character of every byte of `bytes` to `out`.
void append_byte_chars(std::string_view bytes, std::string& out);

// Appends the bytes that `chars` stands for to `out` and returns true; when some character of
// `chars` is not in the map, leaves `out` unchanged and returns false (HF then uses the raw text).
bool append_chars_as_bytes(std::string_view chars, std::string& out);

}  // namespace sparserl::text
