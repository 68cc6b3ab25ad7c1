#include "train/ppo_task.h"

namespace sparserl::train {

ppo_task make_ppo_task(const policy& p, std::string id, csr_matrix matrix, sparse_op op,
                       int32_t k) {
  ppo_task t;
  t.id = std::move(id);
  t.op = op;
  t.k = k;
  t.input = read_matrix(p, matrix);
  t.matrix = std::move(matrix);
  return t;
}

}  // namespace sparserl::train
