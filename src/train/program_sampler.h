#pragma once
// Sampling kernel programs from the policy for a batch of (matrix, op) tasks: matrix prefix +
// prompt in, generation until the program's end token, EOS or max_new_tokens. PPO's rollouts,
// `sparserl generate` and the quickstart all sample through here.
#include <vector>

#include "kernel/program.h"
#include "model/generate.h"
#include "model/matrix_encoding.h"
#include "train/policy.h"

namespace sparserl::train {

struct program_request {
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;
  const csr_matrix* matrix = nullptr;
  const matrix_encoding* encoding = nullptr;
};

struct sampled_programs {
  std::vector<std::vector<int32_t>> prompts;  // token ids, one per request
  std::vector<generation> generations;        // text has the program end stripped
  torch::Tensor prefix;                       // [b, p, hidden], no grad
};

sampled_programs sample_programs(const policy& p, const std::vector<program_request>& requests,
                                 int64_t max_new_tokens, const sampling_options& sampling);

}  // namespace sparserl::train
