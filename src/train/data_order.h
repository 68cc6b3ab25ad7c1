#pragma once
// A seeded, resumable order over a dataset: epoch e visits every index once in a permutation drawn
// from (seed, e). The whole position is one number (samples consumed), so a checkpoint stores it
// and a resumed run draws exactly the batches an uninterrupted run would have drawn.
#include <cstdint>
#include <vector>

namespace sparserl::train {

class data_order {
 public:
  data_order(int64_t size, uint64_t seed, int64_t consumed = 0);

  // The next `count` indices (wrapping into the next epoch).
  std::vector<int64_t> next(int64_t count);
  int64_t consumed() const { return consumed_; }

 private:
  void shuffle_for(int64_t epoch);

  int64_t size_;
  uint64_t seed_;
  int64_t consumed_;
  int64_t epoch_ = -1;
  std::vector<int64_t> perm_;
};

}  // namespace sparserl::train
