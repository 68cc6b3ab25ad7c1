#pragma once
// The text the policy reads after the matrix prefix, and the end of what it writes. One place, so
// SFT, PPO, generation and the quickstart all train and sample the same prompt.
#include <cstdint>
#include <string>

#include "kernel/program.h"
#include "sparse/csr_matrix.h"

namespace sparserl::train {

// What the prompt states about the matrix: its size and how long its rows are. The row lengths
// are spelled out because they choose most of a program (csr_scalar or csr_vector and its lanes,
// ELL's padding, COO for power-law rows), and in the prefix's global token they are a log over
// the 32-bit range, where 3 and 21 nonzeros per row differ by 0.08: held-out policies wrote
// csr_scalar for 21 per row (0.64x of csr_vector, H200 2026-12-04).
struct prompt_matrix {
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t longest_row = 0;
};
prompt_matrix prompt_matrix_of(const csr_matrix& matrix);

// A chat-style request naming the op, the matrix's size and row lengths (its structure is in the
// prefix): "... for the sparse matrix above: 100467 x 100467, 2096649 nonzeros, 20.9 per row on
// average, at most 27.<|im_end|>...".
std::string task_prompt(sparse_op op, int32_t k, const csr_matrix& matrix);
std::string task_prompt(sparse_op op, int32_t k, const prompt_matrix& matrix);

// What ends a program: the tokenizer's EOS follows it in SFT targets; generation also stops here.
inline const char* program_end = "<|im_end|>";

// The generated text up to (not including) the first program_end or "<|endoftext|>": what goes to
// the completion parser.
std::string strip_program_end(const std::string& generated);

}  // namespace sparserl::train
