#pragma once
// A PPO task: a matrix and the operation the policy writes a kernel for, with what the policy reads
// of it (the prefix's encoding, the prompt's facts) computed once.
#include <cstdint>
#include <string>

#include "kernel/program.h"
#include "model/matrix_encoding.h"
#include "sparse/csr_matrix.h"
#include "train/policy.h"
#include "train/program_sampler.h"

namespace sparserl::train {

struct ppo_task {
  std::string id;  // names the matrix for the evaluator's caches
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;
  csr_matrix matrix;
  matrix_input input;
};

// A task for `matrix` (encoded by the policy's projector options).
ppo_task make_ppo_task(const policy& p, std::string id, csr_matrix matrix, sparse_op op, int32_t k);

}  // namespace sparserl::train
