#pragma once
// The text the policy reads after the matrix prefix, and the end of what it writes. One place, so
// SFT, PPO, generation and the quickstart all train and sample the same prompt.
#include <cstdint>
#include <string>
#include <vector>

#include "kernel/program.h"
#include "sparse/csr_matrix.h"
#include "sparse/features.h"

namespace sparserl::train {

// What the prompt states about the matrix: its size, how long its rows are, how its nodes are
// numbered and its dense blocks. These choose most of a program (csr_scalar or csr_vector and its
// lanes, ELL's padding, COO for power-law rows, RCSR for a mesh numbered at random, BSR 3x3 for
// 3-dof FEM), and the prefix does not carry them to the choice: held-out policies wrote
// csr_scalar for 21 per row (0.64x of csr_vector, H200 2026-12-04), and a small policy trained
// with and without the node order in the prefix wrote the same 18 held-out programs, but 13
// instead of 7 of the heuristic's templates with the structure stated here (CPU, 2026-12-04,
// docs/results/cpu-sft-embedding-vs-prompt-2026-12-04.txt).
struct prompt_matrix {
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t longest_row = 0;
  std::string structure;  // structure_phrase(); empty: not stated
};
// From the features the prefix's encoding is made from (computing them renumbers a matrix in
// random order, about a copy of it: make them once per matrix, not per sample).
prompt_matrix prompt_matrix_of(const csr_matrix& matrix, const matrix_features& features);
prompt_matrix prompt_matrix_of(const csr_matrix& matrix);

// "numbered locally" / "numbered at random, with a local order" (RCM finds one, as the heuristic's
// RCSR rule asks) / "numbered at random, without a local order", then ", dense 3x3 blocks" where
// blocks were detected.
std::string structure_phrase(const matrix_features& features);
// Every phrase structure_phrase() can write: the tokenizer's training texts hold them all.
std::vector<std::string> structure_phrases();

// A chat-style request naming the op, the matrix's size, row lengths and structure: "... for the
// sparse matrix above: 100467 x 100467, 2096649 nonzeros, 20.9 per row on average, at most 27;
// numbered locally, dense 3x3 blocks.<|im_end|>...".
std::string task_prompt(sparse_op op, int32_t k, const csr_matrix& matrix);
std::string task_prompt(sparse_op op, int32_t k, const prompt_matrix& matrix);

// What ends a program: the tokenizer's EOS follows it in SFT targets; generation also stops here.
inline const char* program_end = "<|im_end|>";

// The generated text up to (not including) the first program_end or "<|endoftext|>": what goes to
// the completion parser.
std::string strip_program_end(const std::string& generated);

}  // namespace sparserl::train
