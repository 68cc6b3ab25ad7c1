#include "kernel/cuda_lexer.h"

#include <cstring>

namespace sparserl {

namespace {

// Phase 2: the text with every backslash-newline (and backslash-CR-LF) removed, and the
// original line of each remaining character. Only exact splices count: a compiler that splices
// more (backslash, spaces, newline) would see a longer comment, never a shorter one.
struct spliced_text {
  std::string text;
  std::vector<int> line_of;  // text.size() + 1 entries (the last is the end-of-text line)
};

spliced_text splice(const std::string& source) {
  spliced_text out;
  out.text.reserve(source.size());
  out.line_of.reserve(source.size() + 1);
  int line = 1;
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '\\' && i + 1 < source.size() && source[i + 1] == '\n') {
      ++i;
      ++line;
      continue;
    }
    if (c == '\\' && i + 2 < source.size() && source[i + 1] == '\r' && source[i + 2] == '\n') {
      i += 2;
      ++line;
      continue;
    }
    out.text += c;
    out.line_of.push_back(line);
    if (c == '\n') ++line;
  }
  out.line_of.push_back(line);
  return out;
}

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Longest first, so maximal munch is a first match. Digraphs map to their primary spelling.
struct punct_spelling {
  const char* text;
  const char* normal;
};
constexpr punct_spelling puncts[] = {
    {"%:%:", "##"}, {"...", "..."}, {"<<=", "<<="}, {">>=", ">>="}, {"->*", "->*"}, {"##", "##"},
    {"%:", "#"},    {"<%", "{"},    {"%>", "}"},    {"<:", "["},    {":>", "]"},    {"::", "::"},
    {"->", "->"},   {"++", "++"},   {"--", "--"},   {"<<", "<<"},   {">>", ">>"},   {"<=", "<="},
    {">=", ">="},   {"==", "=="},   {"!=", "!="},   {"&&", "&&"},   {"||", "||"},   {"+=", "+="},
    {"-=", "-="},   {"*=", "*="},   {"/=", "/="},   {"%=", "%="},   {"&=", "&="},   {"|=", "|="},
    {"^=", "^="},   {".*", ".*"},   {"#", "#"},     {"{", "{"},     {"}", "}"},     {"[", "["},
    {"]", "]"},     {"(", "("},     {")", ")"},     {"<", "<"},     {">", ">"},     {";", ";"},
    {":", ":"},     {",", ","},     {".", "."},     {"?", "?"},     {"~", "~"},     {"!", "!"},
    {"+", "+"},     {"-", "-"},     {"*", "*"},     {"/", "/"},     {"%", "%"},     {"^", "^"},
    {"&", "&"},     {"|", "|"},     {"=", "="},
};

class lexer {
 public:
  explicit lexer(const std::string& source) : s_(splice(source)), t_(s_.text) {}

  lex_result run() {
    while (pos_ < t_.size()) step();
    return std::move(out_);
  }

 private:
  void step() {
    const char c = t_[pos_];
    if (c == '\n') {
      ++logical_line_;
      line_start_ = true;
      ++pos_;
    } else if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r') {
      ++pos_;
    } else if (c == '/' && peek(1) == '/') {
      // A lone CR ends the comment here: a compiler that takes CR as a newline must not see
      // code that we took for comment.
      while (pos_ < t_.size() && t_[pos_] != '\n' && t_[pos_] != '\r') ++pos_;
    } else if (c == '/' && peek(1) == '*') {
      block_comment();
    } else if (is_ident_start(c)) {
      identifier_or_prefixed_literal();
    } else if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
      number();
    } else if (c == '"') {
      quoted(pos_, '"', token_kind::string);
    } else if (c == '\'') {
      quoted(pos_, '\'', token_kind::character);
    } else if (c == '<' && expecting_header_name()) {
      header_name();
    } else {
      punctuator();
    }
  }

  char peek(size_t ahead) const { return pos_ + ahead < t_.size() ? t_[pos_ + ahead] : '\0'; }

  void fail(size_t at, const std::string& what, bool at_end) {
    if (!out_.error.empty()) return;
    out_.error = what;
    out_.error_line = s_.line_of[at];
    out_.error_at_end = at_end;
  }

  void emit(token_kind kind, size_t begin, size_t end, std::string text) {
    token tok;
    tok.kind = kind;
    tok.text = std::move(text);
    tok.line = s_.line_of[begin];
    tok.logical_line = logical_line_;
    tok.line_start = line_start_;
    tok.offset = begin;
    tok.length = end - begin;
    out_.tokens.push_back(std::move(tok));
    line_start_ = false;
  }
  void emit(token_kind kind, size_t begin, size_t end) {
    emit(kind, begin, end, t_.substr(begin, end - begin));
  }

  void block_comment() {
    const size_t begin = pos_;
    const size_t close = t_.find("*/", pos_ + 2);
    if (close == std::string::npos) {
      fail(begin, "unterminated comment", true);
      pos_ = t_.size();
      return;
    }
    pos_ = close + 2;  // a comment is one space: the logical line goes on past its newlines
  }

  void identifier_or_prefixed_literal() {
    const size_t begin = pos_;
    while (pos_ < t_.size() && is_ident_char(t_[pos_])) ++pos_;
    const std::string word = t_.substr(begin, pos_ - begin);
    const char next = pos_ < t_.size() ? t_[pos_] : '\0';
    if (next == '"' &&
        (word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR")) {
      raw_string(begin);
    } else if ((next == '"' || next == '\'') &&
               (word == "u8" || word == "u" || word == "U" || word == "L")) {
      quoted(begin, next, next == '"' ? token_kind::string : token_kind::character);
    } else {
      emit(token_kind::identifier, begin, pos_);
    }
  }

  void number() {
    const size_t begin = pos_;
    ++pos_;
    while (pos_ < t_.size()) {
      const char c = t_[pos_];
      const char prev = t_[pos_ - 1];
      if ((c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P')) {
        ++pos_;
      } else if (c == '\'' && is_ident_char(peek(1))) {
        pos_ += 2;  // digit separator
      } else if (is_ident_char(c) || c == '.') {
        ++pos_;
      } else {
        break;
      }
    }
    emit(token_kind::number, begin, pos_);
  }

  // A "..." or '...' literal from `begin` (its prefix included); pos_ is at the opening quote.
  void quoted(size_t begin, char quote, token_kind kind) {
    ++pos_;
    while (pos_ < t_.size() && t_[pos_] != quote) {
      if (t_[pos_] == '\n') break;
      pos_ += (t_[pos_] == '\\' && pos_ + 1 < t_.size() && t_[pos_ + 1] != '\n') ? 2 : 1;
    }
    if (pos_ >= t_.size()) {
      fail(begin, quote == '"' ? "unterminated string literal" : "unterminated character literal",
           true);
      emit(kind, begin, t_.size());
      pos_ = t_.size();
      return;
    }
    if (t_[pos_] == '\n') {  // ends at the line break, as compilers recover
      fail(begin, quote == '"' ? "unterminated string literal" : "unterminated character literal",
           false);
      emit(kind, begin, pos_);
      return;
    }
    ++pos_;
    emit(kind, begin, pos_);
  }

  // R"delim( ... )delim"; pos_ is at the opening quote.
  void raw_string(size_t begin) {
    size_t p = pos_ + 1;
    std::string delim;
    while (p < t_.size() && t_[p] != '(' && delim.size() <= 16) {
      const char c = t_[p];
      if (c == ' ' || c == ')' || c == '\\' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
          c == '\r')
        break;
      delim += c;
      ++p;
    }
    if (p >= t_.size()) {
      fail(begin, "unterminated raw string literal", true);
      emit(token_kind::string, begin, t_.size());
      pos_ = t_.size();
      return;
    }
    if (t_[p] != '(') {
      fail(begin, "malformed raw string literal delimiter", false);
      pos_ = p;
      emit(token_kind::string, begin, p);
      return;
    }
    const std::string close = ")" + delim + "\"";
    const size_t end = t_.find(close, p + 1);
    if (end == std::string::npos) {
      fail(begin, "unterminated raw string literal", true);
      emit(token_kind::string, begin, t_.size());
      pos_ = t_.size();
      return;
    }
    pos_ = end + close.size();
    emit(token_kind::string, begin, pos_);
  }

  // True right after `#include`, `#include_next` or `#import` at the start of a logical line.
  bool expecting_header_name() const {
    const auto& toks = out_.tokens;
    if (toks.size() < 2) return false;
    const token& name = toks[toks.size() - 1];
    const token& hash = toks[toks.size() - 2];
    return hash.line_start && hash.text == "#" && hash.logical_line == logical_line_ &&
           name.logical_line == logical_line_ && name.kind == token_kind::identifier &&
           (name.text == "include" || name.text == "include_next" || name.text == "import");
  }

  void header_name() {
    const size_t close = t_.find_first_of(">\n", pos_ + 1);
    if (close == std::string::npos || t_[close] != '>') {
      punctuator();
      return;
    }
    const size_t begin = pos_;
    pos_ = close + 1;
    emit(token_kind::header_name, begin, pos_);
  }

  void punctuator() {
    const size_t begin = pos_;
    // C++11 [lex.pptoken]: "<::" not followed by ':' or '>' is '<' then '::'.
    if (t_.compare(pos_, 3, "<::") == 0 && peek(3) != ':' && peek(3) != '>') {
      ++pos_;
      emit(token_kind::punct, begin, pos_, "<");
      return;
    }
    for (const punct_spelling& p : puncts) {
      const size_t n = std::strlen(p.text);
      if (t_.compare(pos_, n, p.text) == 0) {
        pos_ += n;
        emit(token_kind::punct, begin, pos_, p.normal);
        return;
      }
    }
    ++pos_;
    emit(token_kind::other, begin, pos_);
  }

  spliced_text s_;
  const std::string& t_;
  size_t pos_ = 0;
  int logical_line_ = 0;
  bool line_start_ = true;
  lex_result out_;
};

}  // namespace

lex_result lex_cuda(const std::string& source) { return lexer(source).run(); }

size_t match_entry_definition(const std::vector<token>& t, size_t i) {
  if (i + 2 >= t.size() || t[i].kind != token_kind::identifier || t[i].text != "extern" ||
      t[i + 1].kind != token_kind::string || t[i + 1].text != "\"C\"")
    return no_token;
  bool global = false, is_void = false;
  for (size_t j = i + 2; j < t.size(); ++j) {
    const token& tok = t[j];
    if (tok.kind != token_kind::identifier) return no_token;
    if (tok.text == "__global__") {
      global = true;
    } else if (tok.text == "void") {
      is_void = true;
    } else if (tok.text == "__launch_bounds__") {
      if (j + 1 >= t.size() || t[j + 1].text != "(") return no_token;
      int depth = 0;
      size_t k = j + 1;
      for (; k < t.size(); ++k) {
        if (t[k].text == "(") ++depth;
        if (t[k].text == ")" && --depth == 0) break;
      }
      if (k >= t.size()) return no_token;
      j = k;
    } else {
      const bool call = j + 1 < t.size() && t[j + 1].text == "(";
      return global && is_void && call ? j : no_token;
    }
  }
  return no_token;
}

}  // namespace sparserl
