// The prompt states the matrix's size, row lengths and structure (computed from the matrix, not
// passed in), and strip_program_end cuts a generation at the first end token.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

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
  // Its nonzeros lie 4, 1, 1, 2, 2 and 1 columns off the diagonal: 11/6 over 5 columns is 0.37,
  // a random-looking order, and a matrix that is not square is not renumbered.
  EXPECT_EQ(task_prompt(sparse_op::spmv, 1, m),
            "<|im_start|>user\nWrite a fast CUDA SpMV (y = A x) kernel program for the sparse "
            "matrix above: 4 x 5, 6 nonzeros, 1.5 per row on average, at most 3; numbered at "
            "random, without a local order.<|im_end|>\n<|im_start|>assistant\n");
  const std::string spmm = task_prompt(sparse_op::spmm, 16, m);
  EXPECT_NE(spmm.find("SpMM (C = A B, B dense with k=16 columns)"), std::string::npos);
  EXPECT_NE(spmm.find("1.5 per row on average, at most 3;"), std::string::npos);
  // Facts made elsewhere (the tokenizer's texts) with no structure state none.
  EXPECT_NE(
      task_prompt(sparse_op::spmv, 1, prompt_matrix{4, 5, 6, 3, ""}).find("at most 3.<|im_end|>"),
      std::string::npos);
}

// What the heuristic decides RCSR and BSR 3x3 on, in words: a mesh numbered at random has a
// local order RCM finds, a power-law graph in random order has none, the natural order is local,
// 3-dof FEM has full 3 x 3 blocks.
TEST(prompt, states_the_node_order_and_the_blocks) {
  auto structure = [](const char* family, const char* order, int32_t dof) {
    generator_spec s = default_spec(family);
    s.rows = 3000;
    s.order = order;
    if (dof > 0) s.dof = dof;
    return prompt_matrix_of(generate_matrix(s)).structure;
  };
  EXPECT_EQ(structure("mesh2d", "random", 0), "numbered at random, with a local order");
  EXPECT_EQ(structure("powerlaw", "random", 0), "numbered at random, without a local order");
  EXPECT_EQ(structure("mesh2d", "natural", 0), "numbered locally");
  EXPECT_EQ(structure("fem_mesh", "natural", 3), "numbered locally, dense 3x3 blocks");
  const std::string rcm = structure("fem_mesh", "rcm", 6);
  EXPECT_EQ(rcm, "numbered locally, dense 6x6 blocks");
  // The same words for the same matrix through the features the encoding is made from.
  generator_spec s = default_spec("knn");
  s.rows = 2000;
  s.order = "random";
  const csr_matrix knn = generate_matrix(s);
  EXPECT_EQ(prompt_matrix_of(knn, compute_features(knn)).structure,
            prompt_matrix_of(knn).structure);
}

// The tokenizer is trained on every phrase the prompt can state: each one written for some matrix
// is in the list, and the list has no repeats.
TEST(prompt, structure_phrases_hold_every_phrase_once) {
  const std::vector<std::string> all = structure_phrases();
  EXPECT_EQ(all.size(), 24u);  // 3 orders x (no blocks + blocks of 2..8)
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size());
  matrix_features f;
  for (double column : {0.0, 0.3})
    for (double renumbered : {0.01, 0.3})
      for (int32_t b = 1; b <= 8; ++b) {
        f.column_distance_mean = column;
        f.renumbered_distance_mean = column > 0 ? renumbered : column;
        f.block_size = b;
        EXPECT_NE(std::find(all.begin(), all.end(), structure_phrase(f)), all.end())
            << structure_phrase(f);
      }
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
  EXPECT_NE(task_prompt(sparse_op::spmv, 1, longer).find("at most 21;"), std::string::npos);
}

TEST(prompt, empty_matrix_has_zero_lengths) {
  const csr_matrix empty = csr_from_triplets(3, 3, {});
  EXPECT_NE(
      task_prompt(sparse_op::spmv, 1, empty).find("0 nonzeros, 0.0 per row on average, at most 0;"),
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
