// The premise of program_identity (kernel/program_identity.h): completions with one identity get
// one verdict from the harness (here the CPU emulator): a program and its variant with another
// comment and a markdown fence around it.
#include <gtest/gtest.h>

#include "eval/cpu_runner.h"
#include "eval/evaluator.h"
#include "kernel/abi.h"
#include "kernel/program_identity.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

std::string program(const std::string& comment) {
  return "FORMAT: CSR\nLAUNCH: block=64 rows_per_block=64\n" + comment +
         entry_signature(sparse_op::spmv, format_kind::csr, "spmv_csr") +
         " {\n  int row = blockIdx.x * blockDim.x + threadIdx.x;\n  if (row >= rows) return;\n"
         "  float sum = 0.0f;\n  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i)\n"
         "    sum += values[i] * x[col_idx[i]];\n  y[row] = sum;\n}\n";
}

TEST(program_identity, variants_with_one_identity_get_one_verdict) {
  generator_spec spec;
  spec.family = "banded";
  spec.rows = 300;
  const csr_matrix m = generate_matrix(spec);
  cpu_runner runner;
  evaluator judge(runner);
  const eval_task task{sparse_op::spmv, &m, 1, "banded"};
  const std::string base = program("");
  const std::string variant = "```\n" + program("// same program\n") + "```\n";
  ASSERT_EQ(program_identity(base, sparse_op::spmv), program_identity(variant, sparse_op::spmv));
  const verdict a = judge.evaluate(task, base), b = judge.evaluate(task, variant);
  EXPECT_TRUE(a.correct) << a.failure;
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.reward, b.reward);
}

}  // namespace
}  // namespace sparserl
