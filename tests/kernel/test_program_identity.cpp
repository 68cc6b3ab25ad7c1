// program_identity: completions the harness must judge alike share an identity (the same parsed
// program with other comments, indentation or prose around it), and completions it may judge
// differently do not (another parameter, another token, a macro's `F(x)` against `F (x)`, a
// directive's end moved, a digraph spelt otherwise). tests/eval/test_program_identity_verdict.cpp
// shows the premise through the harness: the same identity, the same verdict.
#include <gtest/gtest.h>

#include "kernel/abi.h"
#include "kernel/program_identity.h"

namespace sparserl {
namespace {

std::string program(const std::string& format, const std::string& body) {
  return format + "\nLAUNCH: block=64 rows_per_block=64\n" +
         entry_signature(sparse_op::spmv, format_kind::csr, "spmv_csr") + " {\n" + body + "}\n";
}

const std::string body =
    "  int row = blockIdx.x * blockDim.x + threadIdx.x;\n  if (row >= rows) return;\n"
    "  float sum = 0.0f;\n  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i)\n"
    "    sum += values[i] * x[col_idx[i]];\n  y[row] = sum;\n";

std::string id(const std::string& completion) {
  return program_identity(completion, sparse_op::spmv);
}

TEST(program_identity, comments_whitespace_and_prose_do_not_change_it) {
  const std::string base = program("FORMAT: CSR", body);
  const std::string commented = program(
      "FORMAT: CSR",
      "// expert: a comment the model wrote\n  int row = blockIdx.x /* which row */ * blockDim.x"
      " + threadIdx.x;\n\n\n  if (row >= rows)    return;\n  float sum = 0.0f; // start\n"
      "  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i)\n    sum += values[i] * "
      "x[col_idx[i]];\n  y[row] = sum;\n");
  EXPECT_EQ(id(base), id(commented));
  // Outside directives a line break is one more space.
  std::string broken = base;
  broken.replace(broken.find("  float sum"), 2, "\n\n");
  broken.replace(broken.find(" * blockDim"), 1, "\n");
  EXPECT_EQ(id(base), id(broken));
  EXPECT_EQ(id(base), id("Here is the kernel:\n```cuda\n" + base + "```\nDone."));
  EXPECT_EQ(id(base).rfind("program\nFORMAT: CSR\nLAUNCH spmv_csr: block=64", 0), 0u) << id(base);
}

TEST(program_identity, what_the_compiler_or_the_harness_sees_changes_it) {
  const std::string base = program("FORMAT: CSR", body);
  EXPECT_NE(id(base), id(program("FORMAT: CSR", "  // nothing\n")));
  std::string other_launch = base;
  other_launch.replace(other_launch.find("block=64"), 8, "block=32");
  EXPECT_NE(id(base), id(other_launch));
  std::string other_token = base;
  other_token.replace(other_token.find("y[row] = sum"), 12, "y[row] = 2 * sum");
  EXPECT_NE(id(base), id(other_token));
  // A function-like macro against an object-like one.
  EXPECT_NE(id(program("FORMAT: CSR", "#define F(x) (x)\n" + body)),
            id(program("FORMAT: CSR", "#define F (x) (x)\n" + body)));
  // A newline inside a block comment does not end a directive; a real one does.
  const std::string inside = id(program("FORMAT: CSR", "#define K 1 /*\n*/ + 2\n" + body));
  EXPECT_NE(inside, id(program("FORMAT: CSR", "#define K 1\n+ 2\n" + body)));
  EXPECT_EQ(inside, id(program("FORMAT: CSR", "#define K 1 + 2\n" + body)));
  // A '#' first on its line starts a directive; after a space on the line before, it does not.
  EXPECT_NE(id(program("FORMAT: CSR", "  int a;\n#define K 2\n" + body)),
            id(program("FORMAT: CSR", "  int a; #define K 2\n" + body)));
  // `ab` is one token, `a b` two; `a/**/b` is `a b`.
  EXPECT_NE(id(program("FORMAT: CSR", "int ab;\n" + body)),
            id(program("FORMAT: CSR", "int a b;\n" + body)));
  EXPECT_EQ(id(program("FORMAT: CSR", "int a/**/b;\n" + body)),
            id(program("FORMAT: CSR", "int a b;\n" + body)));
}

TEST(program_identity, sources_the_lexer_might_misread_are_kept_as_written) {
  // A digraph and its spelling differ inside a stringised macro argument, a line splice moves
  // lines: kept as written, the spacing then counts.
  const std::string digraph = program("FORMAT: CSR", "  int a<:1:> ;\n" + body);
  EXPECT_NE(id(digraph), id(program("FORMAT: CSR", "  int a<:1:>;\n" + body)));
  EXPECT_NE(id(digraph).find("a<:1:> ;"), std::string::npos);
  const std::string spliced = program("FORMAT: CSR", "#define K 1 \\\n + 2\n" + body);
  EXPECT_NE(id(spliced).find("1 \\\n + 2"), std::string::npos);
  EXPECT_NE(id(program("FORMAT: CSR", "  int a = 1; /* open\n" + body)).find("/* open"),
            std::string::npos);  // unterminated comment: a lexical error
}

TEST(program_identity, completions_that_do_not_parse_keep_their_text) {
  EXPECT_EQ(id("no program here"), "text\nno program here");
  EXPECT_NE(id("FORMAT: CSR\nLAUNCH: block=64\n"), id("FORMAT: CSR\nLAUNCH:  block=64\n"));
}

}  // namespace
}  // namespace sparserl
