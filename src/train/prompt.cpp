#include "train/prompt.h"

#include <algorithm>

namespace sparserl::train {

std::string task_prompt(sparse_op op, int32_t k, const csr_matrix& matrix) {
  return task_prompt(op, k, matrix.rows, matrix.cols, matrix.nnz());
}

std::string task_prompt(sparse_op op, int32_t k, int64_t rows, int64_t cols, int64_t nnz) {
  std::string what = op == sparse_op::spmv
                         ? "SpMV (y = A x)"
                         : "SpMM (C = A B, B dense with k=" + std::to_string(k) + " columns)";
  return "<|im_start|>user\nWrite a fast CUDA " + what + " kernel program for the sparse matrix " +
         "above: " + std::to_string(rows) + " x " + std::to_string(cols) + ", " +
         std::to_string(nnz) + " nonzeros.<|im_end|>\n<|im_start|>assistant\n";
}

std::string strip_program_end(const std::string& generated) {
  size_t cut = generated.size();
  for (const char* end : {program_end, "<|endoftext|>"}) cut = std::min(cut, generated.find(end));
  return generated.substr(0, cut);
}

}  // namespace sparserl::train
