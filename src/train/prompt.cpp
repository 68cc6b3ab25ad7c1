#include "train/prompt.h"

#include <algorithm>
#include <cstdio>

namespace sparserl::train {

namespace {

const char* order_phrase(bool random_order, bool local_order) {
  if (!random_order) return "numbered locally";
  return local_order ? "numbered at random, with a local order"
                     : "numbered at random, without a local order";
}

std::string blocks_phrase(int32_t size) {
  if (size <= 1) return "";
  return ", dense " + std::to_string(size) + "x" + std::to_string(size) + " blocks";
}

// detect_block_shape's largest block (its default max_size).
constexpr int32_t largest_detected_block = 8;

}  // namespace

std::string structure_phrase(const matrix_features& f) {
  return order_phrase(f.column_distance_mean > random_order_distance,
                      renumbering_finds_local_order(f)) +
         blocks_phrase(f.block_size);
}

std::vector<std::string> structure_phrases() {
  std::vector<std::string> out;
  for (bool random_order : {false, true})
    for (bool local_order : {false, true}) {
      if (!random_order && local_order) continue;
      for (int32_t b = 1; b <= largest_detected_block; ++b)
        out.push_back(order_phrase(random_order, local_order) + blocks_phrase(b));
    }
  return out;
}

prompt_matrix prompt_matrix_of(const csr_matrix& matrix, const matrix_features& features) {
  return {matrix.rows, matrix.cols, matrix.nnz(), max_row_length(matrix),
          structure_phrase(features)};
}

prompt_matrix prompt_matrix_of(const csr_matrix& matrix) {
  return prompt_matrix_of(matrix, compute_features(matrix));
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
         std::to_string(m.longest_row) + (m.structure.empty() ? "" : "; " + m.structure) +
         ".<|im_end|>\n<|im_start|>assistant\n";
}

std::string strip_program_end(const std::string& generated) {
  size_t cut = generated.size();
  for (const char* end : {program_end, "<|endoftext|>"}) cut = std::min(cut, generated.find(end));
  return generated.substr(0, cut);
}

}  // namespace sparserl::train
