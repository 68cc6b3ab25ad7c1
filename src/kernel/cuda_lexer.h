#pragma once
// A tokenizer for CUDA device source, precise enough to screen untrusted code and to find entry
// points: translation phase 2 (backslash-newline splices), comments, string and character
// literals (prefixed and raw), pp-numbers with digit separators, digraphs (normalised) and header
// names after #include. Where it must guess, it guesses so that comments and literals come out
// shorter than a compiler would see them (safe for screening). Never throws on any bytes.
#include <cstddef>
#include <string>
#include <vector>

namespace sparserl {

enum class token_kind {
  identifier,   // also keywords
  number,       // a pp-number
  string,       // "..." with any prefix, or a raw string literal
  character,    // '...' with any prefix
  header_name,  // <...> right after #include / #include_next / #import
  punct,        // an operator or punctuator; digraphs normalised ("%:" -> "#", "<%" -> "{")
  other,        // a byte no token starts with (stray backslash, '@', '$', '`', non-ASCII, control)
};

struct token {
  token_kind kind = token_kind::other;
  std::string text;         // spelling after splicing (digraphs normalised)
  int line = 0;             // 1-based line of the first character in the original source
  int logical_line = 0;     // 0-based line after splicing: a directive ends with its logical line
  bool line_start = false;  // first token of its logical line
  size_t offset = 0;        // position in the spliced text (adjacency of tokens)
  size_t length = 0;        // length in the spliced text (before digraph normalisation)
};

struct lex_result {
  std::vector<token> tokens;
  std::string error;          // first lexical error ("unterminated comment"), "" when none
  int error_line = 0;         // its 1-based line
  bool error_at_end = false;  // the error is a construct still open at the end of the text
};

lex_result lex_cuda(const std::string& source);

// When tokens[i..] spell `extern "C" <specifiers> <name> (` with specifiers drawn from
// {__global__, void, __launch_bounds__(...)} and including __global__ and void, returns the index
// of <name>; otherwise returns npos.
inline constexpr size_t no_token = static_cast<size_t>(-1);
size_t match_entry_definition(const std::vector<token>& tokens, size_t i);

}  // namespace sparserl
