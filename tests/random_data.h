#pragma once
// Seeded random inputs shared by the tests: uniform in [-1, 1], never zeros (zeros hide unwritten
// outputs and wrong indexing).
#include <cstdint>
#include <random>
#include <vector>

namespace sparserl::testing {

inline std::vector<float> random_vector(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = val(rng);
  return v;
}

}  // namespace sparserl::testing
