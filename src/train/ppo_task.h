#pragma once
// A PPO task: a matrix and the operation the policy writes a kernel for, with the matrix's
// encoding (for the prefix) computed once.
#include <cstdint>
#include <string>

#include "kernel/program.h"
#include "model/matrix_encoding.h"
#include "sparse/csr_matrix.h"
#include "train/policy.h"

namespace sparserl::train {

struct ppo_task {
  std::string id;  // names the matrix for the evaluator's caches
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;
  csr_matrix matrix;
  matrix_encoding encoding;
};

// A task for `matrix` (encoded by the policy's projector options).
ppo_task make_ppo_task(const policy& p, std::string id, csr_matrix matrix, sparse_op op, int32_t k);

}  // namespace sparserl::train
