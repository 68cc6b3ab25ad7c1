#include "train/data_order.h"

#include <numeric>
#include <random>

#include "sparse/error.h"

namespace sparserl::train {

data_order::data_order(int64_t size, uint64_t seed, int64_t consumed)
    : size_(size), seed_(seed), consumed_(consumed) {
  if (size <= 0) throw error("data order: the dataset is empty");
}

void data_order::shuffle_for(int64_t epoch) {
  perm_.resize(static_cast<size_t>(size_));
  std::iota(perm_.begin(), perm_.end(), int64_t{0});
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch));
  // Fisher-Yates by hand: std::shuffle's draws differ between standard libraries.
  for (int64_t i = size_ - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
    std::swap(perm_[i], perm_[j]);
  }
  epoch_ = epoch;
}

std::vector<int64_t> data_order::next(int64_t count) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i, ++consumed_) {
    const int64_t epoch = consumed_ / size_;
    if (epoch != epoch_) shuffle_for(epoch);
    out.push_back(perm_[consumed_ % size_]);
  }
  return out;
}

}  // namespace sparserl::train
