#include "text/added_vocabulary.h"

#include <utf8proc.h>

#include <algorithm>

#include "text/normalizer.h"
#include "text/utf8.h"

namespace sparserl::text {

namespace {

utf8proc_int32_t char_at(std::string_view s, size_t pos) {
  utf8proc_int32_t c = -1;
  utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + pos),
                   static_cast<utf8proc_ssize_t>(s.size() - pos), &c);
  return c;
}

size_t char_start_before(std::string_view s, size_t pos) {
  do --pos;
  while (pos > 0 && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80);
  return pos;
}

// Rust's char::is_whitespace: the Unicode White_Space property.
bool is_space(utf8proc_int32_t c) {
  if ((c >= 0x09 && c <= 0x0D) || c == 0x85) return true;
  const auto cat = utf8proc_category(c);
  return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

// The regex crate's \w: Alphabetic, marks, decimal digits, connector punctuation, joiners.
bool is_word(utf8proc_int32_t c) {
  if (c == 0x200C || c == 0x200D) return true;
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

}  // namespace

void added_vocabulary::matcher::add(std::string text, size_t token) {
  if (text.empty()) return;
  auto& list = by_first_byte[static_cast<unsigned char>(text[0])];
  list.push_back({std::move(text), token});
  std::stable_sort(list.begin(), list.end(), [](const pattern& a, const pattern& b) {
    return a.text.size() > b.text.size();
  });
  empty = false;
}

added_vocabulary::added_vocabulary(std::vector<added_token> tokens, const normalizer& norm)
    : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const added_token& t = tokens_[i];
    by_content_[t.content] = i;
    by_id_[t.id] = i;
    if (t.normalized)
      normalized_.add(norm.apply(t.content), i);
    else
      raw_.add(t.content, i);
  }
}

// The match [begin, end) of `t` after single_word / lstrip / rstrip, or nothing when the token
// must not split here. `covered` is where the previous segment ended.
std::optional<text_segment> added_vocabulary::accept(std::string_view text, size_t begin,
                                                     size_t end, size_t covered,
                                                     const added_token& t) const {
  if (t.single_word) {
    const bool word_before = begin > 0 && is_word(char_at(text, char_start_before(text, begin)));
    const bool word_after = end < text.size() && is_word(char_at(text, end));
    if (word_before || word_after) return std::nullopt;
  }
  if (t.lstrip) {
    while (begin > covered) {
      const size_t prev = char_start_before(text, begin);
      if (!is_space(char_at(text, prev))) break;
      begin = prev;
    }
  }
  if (t.rstrip) {
    while (end < text.size()) {
      if (!is_space(char_at(text, end))) break;
      end += utf8_length(static_cast<unsigned char>(text[end]));
    }
  }
  return text_segment{begin, end, t.id};
}

void added_vocabulary::split(std::string_view text, bool normalized_set, bool skip_special,
                             std::vector<text_segment>& out) const {
  out.clear();
  const matcher& m = normalized_set ? normalized_ : raw_;
  size_t covered = 0;
  size_t pos = 0;
  while (!m.empty && pos < text.size()) {
    const auto& candidates = m.by_first_byte[static_cast<unsigned char>(text[pos])];
    const pattern* hit = nullptr;
    for (const pattern& p : candidates)
      if (text.compare(pos, p.text.size(), p.text) == 0) {
        hit = &p;
        break;
      }
    if (!hit) {
      ++pos;
      continue;
    }
    const added_token& t = tokens_[hit->token];
    const size_t match_end = pos + hit->text.size();
    // A discarded match still consumes its text, as HF's non-overlapping match iterator does.
    std::optional<text_segment> seg;
    if (!(skip_special && t.special)) seg = accept(text, pos, match_end, covered, t);
    pos = match_end;
    if (!seg) continue;
    if (seg->begin > covered) out.push_back({covered, seg->begin, -1});
    out.push_back(*seg);
    covered = seg->end;
    pos = std::max(pos, covered);
  }
  if (covered < text.size()) out.push_back({covered, text.size(), -1});
}

const added_token* added_vocabulary::find(std::string_view content) const {
  const auto it = by_content_.find(std::string(content));
  return it == by_content_.end() ? nullptr : &tokens_[it->second];
}

const added_token* added_vocabulary::find(int32_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

bool added_vocabulary::is_special(std::string_view content) const {
  const added_token* t = find(content);
  return t && t->special;
}

}  // namespace sparserl::text
