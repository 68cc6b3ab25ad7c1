#include "train/prompt.h"

#include <algorithm>
#include <cstdio>

namespace sparserl::train {

prompt_matrix prompt_matrix_of(const csr_matrix& matrix) {
  const diagonal_distance d = distance_from_diagonal(matrix);
  return {matrix.rows, matrix.cols, matrix.nnz(), max_row_length(matrix), d.largest, d.mean};
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
  const double width = static_cast<double>(std::max<int64_t>(1, std::max(m.rows, m.cols)));
  char distance[96];
  std::snprintf(distance, sizeof distance,
                "; columns at most %.2f%% and on average %.2f%% of the width from the diagonal",
                100.0 * static_cast<double>(m.largest_distance) / width,
                100.0 * m.mean_distance / width);
  return "<|im_start|>user\nWrite a fast CUDA " + what + " kernel program for the sparse matrix " +
         "above: " + std::to_string(m.rows) + " x " + std::to_string(m.cols) + ", " +
         std::to_string(m.nnz) + " nonzeros, " + mean + " per row on average, at most " +
         std::to_string(m.longest_row) + distance + ".<|im_end|>\n<|im_start|>assistant\n";
}

std::string strip_program_end(const std::string& generated) {
  size_t cut = generated.size();
  for (const char* end : {program_end, "<|endoftext|>"}) cut = std::min(cut, generated.find(end));
  return generated.substr(0, cut);
}

}  // namespace sparserl::train
