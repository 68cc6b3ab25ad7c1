// The prompt states the matrix's size and row lengths (computed from the matrix, not passed in),
// and strip_program_end cuts a generation at the first end token.
#include <gtest/gtest.h>

#include "sparse/generators.h"
#include "train/prompt.h"

namespace sparserl::train {
namespace {

TEST(prompt, states_size_and_row_lengths_of_the_matrix) {
  // Rows of 1, 3, 0 and 2 nonzeros: 6 in 4 rows, 1.5 on average, at most 3.
  const csr_matrix m = csr_from_triplets(
      4, 5, {{0, 4, 1.f}, {1, 0, 1.f}, {1, 2, 1.f}, {1, 3, 1.f}, {3, 1, 1.f}, {3, 4, 1.f}});
  const prompt_matrix shape = prompt_matrix_of(m);
  EXPECT_EQ(shape.rows, 4);
  EXPECT_EQ(shape.cols, 5);
  EXPECT_EQ(shape.nnz, 6);
  EXPECT_EQ(shape.longest_row, 3);
  EXPECT_EQ(task_prompt(sparse_op::spmv, 1, m),
            "<|im_start|>user\nWrite a fast CUDA SpMV (y = A x) kernel program for the sparse "
            "matrix above: 4 x 5, 6 nonzeros, 1.5 per row on average, at most 3.<|im_end|>\n"
            "<|im_start|>assistant\n");
  const std::string spmm = task_prompt(sparse_op::spmm, 16, m);
  EXPECT_NE(spmm.find("SpMM (C = A B, B dense with k=16 columns)"), std::string::npos);
  EXPECT_NE(spmm.find("1.5 per row on average, at most 3."), std::string::npos);
}

TEST(prompt, rows_of_different_lengths_read_differently) {
  // The reason the lengths are in the text: two matrices of one size whose rows differ get
  // different prompts (the held-out FEM meshes, ~21 per row, vs 2D meshes, ~7).
  generator_spec spec = default_spec("banded");
  spec.rows = 1000;
  spec.bandwidth = 3;
  const csr_matrix shorter = generate_matrix(spec);
  spec.bandwidth = 10;
  const csr_matrix longer = generate_matrix(spec);
  EXPECT_NE(task_prompt(sparse_op::spmv, 1, shorter), task_prompt(sparse_op::spmv, 1, longer));
  EXPECT_NE(task_prompt(sparse_op::spmv, 1, longer).find("at most 21."), std::string::npos);
}

TEST(prompt, empty_matrix_has_zero_lengths) {
  const csr_matrix empty = csr_from_triplets(3, 3, {});
  EXPECT_NE(
      task_prompt(sparse_op::spmv, 1, empty).find("0 nonzeros, 0.0 per row on average, at most 0."),
      std::string::npos);
  EXPECT_NE(task_prompt(sparse_op::spmv, 1, csr_from_triplets(0, 0, {})).find("0 x 0"),
            std::string::npos);
}

TEST(prompt, strip_program_end_cuts_at_the_first_end) {
  EXPECT_EQ(strip_program_end("FORMAT: CSR\nx<|im_end|>junk<|endoftext|>"), "FORMAT: CSR\nx");
  EXPECT_EQ(strip_program_end("a<|endoftext|>b<|im_end|>"), "a");
  EXPECT_EQ(strip_program_end("no end"), "no end");
}

}  // namespace
}  // namespace sparserl::train
