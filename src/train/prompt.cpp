#include "train/prompt.h"

#include <algorithm>
#include <cstdio>

namespace sparserl::train {

prompt_matrix prompt_matrix_of(const csr_matrix& matrix) {
  return {matrix.rows, matrix.cols, matrix.nnz(), max_row_length(matrix)};
}

std::string task_prompt(sparse_op op, int32_t k, const csr_matrix& matrix) {
  return task_prompt(op, k, prompt_matrix_of(matrix));
}

std::string task_prompt(sparse_op op, int32_t k, const prompt_matrix& m) {
  std::string what = op == sparse_op::spmv
                         ? "SpMV (y = A x)"
                         : "SpMM (C = A B, B dense with k=" + std::to_string(k) + " columns)";
  char mean[32];
  std::snprintf(mean, sizeof mean, "%.1f",
                m.rows > 0 ? static_cast<double>(m.nnz) / static_cast<double>(m.rows) : 0.0);
  return "<|im_start|>user\nWrite a fast CUDA " + what + " kernel program for the sparse matrix " +
         "above: " + std::to_string(m.rows) + " x " + std::to_string(m.cols) + ", " +
         std::to_string(m.nnz) + " nonzeros, " + mean + " per row on average, at most " +
         std::to_string(m.longest_row) + ".<|im_end|>\n<|im_start|>assistant\n";
}

std::string strip_program_end(const std::string& generated) {
  size_t cut = generated.size();
  for (const char* end : {program_end, "<|endoftext|>"}) cut = std::min(cut, generated.find(end));
  return generated.substr(0, cut);
}

}  // namespace sparserl::train
