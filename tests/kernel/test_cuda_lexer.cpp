#include <gtest/gtest.h>

#include "kernel/cuda_lexer.h"

namespace sparserl {
namespace {

std::vector<std::string> texts(const std::string& source) {
  std::vector<std::string> out;
  for (const token& t : lex_cuda(source).tokens) out.push_back(t.text);
  return out;
}

TEST(cuda_lexer, comments_and_literals_hide_their_contents) {
  EXPECT_EQ(texts("a /* asm */ b // asm\nc \"asm\" 'x'"),
            (std::vector<std::string>{"a", "b", "c", "\"asm\"", "'x'"}));
  EXPECT_EQ(texts("s = \"a\\\"b\"; t"),
            (std::vector<std::string>{"s", "=", "\"a\\\"b\"", ";", "t"}));
  EXPECT_EQ(texts("u8\"x\" L'y' R\"d(a \" )\" b)d\" z"),
            (std::vector<std::string>{"u8\"x\"", "L'y'", "R\"d(a \" )\" b)d\"", "z"}));
}

TEST(cuda_lexer, splices_join_identifiers_and_extend_comments) {
  EXPECT_EQ(texts("as\\\nm"), (std::vector<std::string>{"asm"}));
  EXPECT_EQ(texts("// comment \\\nasm\nb"), (std::vector<std::string>{"b"}));
  // A lone CR ends a line comment, so nothing after it hides in the comment.
  EXPECT_EQ(texts("// c\rasm"), (std::vector<std::string>{"asm"}));
}

TEST(cuda_lexer, digraphs_numbers_and_operators) {
  EXPECT_EQ(texts("%:%: %: <% %> <: :>"),
            (std::vector<std::string>{"##", "#", "{", "}", "[", "]"}));
  EXPECT_EQ(texts("1'000'000 0x1p-3f 1e+5 .5"),
            (std::vector<std::string>{"1'000'000", "0x1p-3f", "1e+5", ".5"}));
  EXPECT_EQ(texts("a<<<b>>>"), (std::vector<std::string>{"a", "<<", "<", "b", ">>", ">"}));
  EXPECT_EQ(texts("f<::g>"), (std::vector<std::string>{"f", "<", "::", "g", ">"}));
}

TEST(cuda_lexer, header_names_only_after_include) {
  const lex_result r = lex_cuda("#include <cuda_fp16.h>\nx < y > z");
  ASSERT_GE(r.tokens.size(), 3u);
  EXPECT_EQ(r.tokens[2].kind, token_kind::header_name);
  EXPECT_EQ(r.tokens[2].text, "<cuda_fp16.h>");
  EXPECT_EQ(r.tokens[4].text, "<");
}

TEST(cuda_lexer, lines_and_logical_lines) {
  const lex_result r = lex_cuda("#define X \\\n  1\ny /* a\nb */ z\n");
  ASSERT_EQ(r.tokens.size(), 6u);
  EXPECT_EQ(r.tokens[3].text, "1");
  EXPECT_EQ(r.tokens[3].line, 2);
  EXPECT_EQ(r.tokens[3].logical_line, 0);  // the spliced directive goes on
  EXPECT_EQ(r.tokens[4].text, "y");
  EXPECT_TRUE(r.tokens[4].line_start);
  EXPECT_EQ(r.tokens[5].text, "z");
  EXPECT_EQ(r.tokens[5].line, 4);
  EXPECT_EQ(r.tokens[5].logical_line, r.tokens[4].logical_line);  // a comment is one space
  EXPECT_FALSE(r.tokens[5].line_start);
}

TEST(cuda_lexer, errors) {
  lex_result r = lex_cuda("a /* b");
  EXPECT_EQ(r.error, "unterminated comment");
  EXPECT_TRUE(r.error_at_end);
  r = lex_cuda("x\n\"abc\ny");
  EXPECT_EQ(r.error, "unterminated string literal");
  EXPECT_EQ(r.error_line, 2);
  EXPECT_FALSE(r.error_at_end);
  EXPECT_EQ(r.tokens.back().text, "y");  // lexing goes on after the line
  r = lex_cuda("R\"abc");
  EXPECT_TRUE(r.error_at_end);
  EXPECT_EQ(lex_cuda("@ \\").tokens.size(), 2u);
  EXPECT_EQ(lex_cuda("@ \\").tokens[0].kind, token_kind::other);
}

TEST(cuda_lexer, entry_definitions) {
  auto name = [](const std::string& s) {
    const lex_result r = lex_cuda(s);
    const size_t at = match_entry_definition(r.tokens, 0);
    return at == no_token ? std::string() : r.tokens[at].text;
  };
  EXPECT_EQ(name("extern \"C\" __global__ void f(int)"), "f");
  EXPECT_EQ(name("extern \"C\" void __global__ __launch_bounds__(256, (2)) g (int)"), "g");
  EXPECT_EQ(name("extern \"C\" __global__ int f(int)"), "");
  EXPECT_EQ(name("extern \"C\" void f(int)"), "");
  EXPECT_EQ(name("extern \"C\" { __global__ void f(int) }"), "");
  EXPECT_EQ(name("extern \"C++\" __global__ void f(int)"), "");
}

}  // namespace
}  // namespace sparserl
