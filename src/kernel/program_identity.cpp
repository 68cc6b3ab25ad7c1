#include "kernel/program_identity.h"

#include <array>

#include "kernel/completion.h"
#include "kernel/cuda_lexer.h"

namespace sparserl {
namespace {

// Sources whose token texts might not be what the compiler sees: kept as written.
bool keep_as_written(const std::string& source, const lex_result& lexed) {
  if (!lexed.error.empty()) return true;
  for (const token& t : lexed.tokens)
    if (t.kind == token_kind::other) return true;
  // Splices and digraphs: the lexer's texts are spliced and normalised, a stringised macro
  // argument is not.
  static constexpr std::array<const char*, 7> written = {"\\\n", "\\\r", "<%", "%>",
                                                         "<:",   ":>",   "%:"};
  for (const char* s : written)
    if (source.find(s) != std::string::npos) return true;
  return false;
}

// What separates two tokens for the compiler, from the text between them (whitespace and
// comments only): a newline where one stands outside a block comment, a space where anything
// stands (a comment is one space), nothing where they touch.
const char* separator(const std::string& source, size_t begin, size_t end) {
  if (begin == end) return "";
  for (size_t i = begin; i < end; ++i) {
    if (source.compare(i, 2, "/*") == 0) {
      const size_t close = source.find("*/", i + 2);
      i = close == std::string::npos ? end : close + 1;
    } else if (source.compare(i, 2, "//") == 0) {
      while (i < end && source[i] != '\n') ++i;
      if (i < end) return "\n";
    } else if (source[i] == '\n') {
      return "\n";
    }
  }
  return " ";
}

std::string canonical_source(const std::string& source) {
  const lex_result lexed = lex_cuda(source);
  if (keep_as_written(source, lexed)) return source;
  // Without splices the lexer's offsets are the source's. A newline matters only where it ends a
  // directive or starts one (a '#' first on its line); elsewhere it is one more space.
  std::string out;
  bool in_directive = false;
  for (size_t i = 0; i < lexed.tokens.size(); ++i) {
    const token& t = lexed.tokens[i];
    bool line_start = i == 0;
    if (i > 0) {
      const token& before = lexed.tokens[i - 1];
      std::string gap = separator(source, before.offset + before.length, t.offset);
      if (gap == "\n" && !in_directive && t.text != "#") gap = " ";
      line_start = gap == "\n";
      out += gap;
    }
    if (line_start) in_directive = t.text == "#";
    out += t.text;
  }
  return out;
}

}  // namespace

std::string program_identity(const std::string& completion, sparse_op op) {
  parse_result parsed = parse_completion(completion, op);
  if (!parsed.program) return "text\n" + completion;
  parsed.program->source = canonical_source(parsed.program->source);
  return "program\n" + parsed.program->to_text();
}

}  // namespace sparserl
