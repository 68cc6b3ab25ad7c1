#pragma once
// Sampling kernel programs from the policy for a batch of (matrix, op) tasks: matrix prefix +
// prompt in, generation until the program's end token, EOS or max_new_tokens. PPO's rollouts,
// `sparserl generate` and the quickstart all sample through here.
#include <vector>

#include "kernel/program.h"
#include "model/generate.h"
#include "model/matrix_encoding.h"
#include "train/policy.h"
#include "train/prompt.h"

namespace sparserl::train {

// What the policy reads of a matrix: the prefix's encoding and the prompt's facts, made from one
// compute_features pass (the node order it states renumbers a matrix in random order).
struct matrix_input {
  matrix_encoding encoding;
  prompt_matrix facts;
};
matrix_input read_matrix(const policy& p, const csr_matrix& matrix);

struct program_request {
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;
  const matrix_input* input = nullptr;
};

struct sampled_programs {
  std::vector<std::vector<int32_t>> prompts;  // token ids, one per request
  std::vector<generation> generations;        // text has the program end stripped
  torch::Tensor prefix;                       // [b, p, hidden], no grad
};

sampled_programs sample_programs(const policy& p, const std::vector<program_request>& requests,
                                 int64_t max_new_tokens, const sampling_options& sampling);

}  // namespace sparserl::train
