#pragma once
// The text the policy reads after the matrix prefix, and the end of what it writes. One place, so
// SFT, PPO, generation and the quickstart all train and sample the same prompt.
#include <string>

#include "kernel/program.h"
#include "sparse/csr_matrix.h"

namespace sparserl::train {

// A chat-style request naming the op and the matrix's size (its structure is in the prefix).
std::string task_prompt(sparse_op op, int32_t k, const csr_matrix& matrix);
std::string task_prompt(sparse_op op, int32_t k, int64_t rows, int64_t cols, int64_t nnz);

// What ends a program: the tokenizer's EOS follows it in SFT targets; generation also stops here.
inline const char* program_end = "<|im_end|>";

// The generated text up to (not including) the first program_end or "<|endoftext|>": what goes to
// the completion parser.
std::string strip_program_end(const std::string& generated);

}  // namespace sparserl::train
