#pragma once
// Shared pieces of the generator families (generators_*.cpp). Every row (or edge chunk) draws
// from its own counter-seeded stream, so rows can be generated in parallel and still come out
// bit-identical for a seed whatever the thread count.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sparse/csr_matrix.h"
#include "sparse/error.h"
#include "sparse/generators.h"

namespace sparserl::gen {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256**, seeded through splitmix64 from (seed, stream): cheap enough to seed per row,
// unlike std::mt19937_64 whose 312-word state would dominate short rows.
class rng {
 public:
  rng(uint64_t seed, uint64_t stream) {
    uint64_t mix = seed;
    uint64_t state = splitmix64(mix) ^ (stream * 0xd1b54a32d192ed03ULL);
    for (uint64_t& word : s_) word = splitmix64(state);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n), n >= 1 (Lemire's multiply-shift with rejection: unbiased).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    if (static_cast<uint64_t>(m) < n) {
      const uint64_t threshold = (0 - n) % n;
      while (static_cast<uint64_t>(m) < threshold) m = static_cast<unsigned __int128>(next()) * n;
    }
    return static_cast<uint64_t>(m >> 64);
  }
  // Uniform in [lo, hi], lo <= hi.
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Streams of one seed: rows use their index; anything drawn once per matrix uses these.
inline constexpr uint64_t global_stream = ~uint64_t{0};
inline constexpr uint64_t value_stream_offset = uint64_t{1} << 40;

// Nonzero values: uniform magnitude in [0.5, 1.5) with a random sign, so no value is near zero
// and row sums do not cancel catastrophically in float.
inline float random_value(rng& g) {
  const uint64_t bits = g.next();
  const float magnitude = 0.5f + static_cast<float>(bits >> 40) * 0x1.0p-24f;
  return (bits >> 63) ? -magnitude : magnitude;
}
inline void append_random_values(rng& g, size_t count, std::vector<float>& values) {
  for (size_t i = 0; i < count; ++i) values.push_back(random_value(g));
}

// Appends k distinct integers of [lo, hi), ascending (k <= hi - lo).
void sample_distinct(rng& g, int64_t lo, int64_t hi, int64_t k, std::vector<int32_t>& out);
// Appends each integer of [lo, hi) independently with probability p, ascending.
void sample_bernoulli(rng& g, int64_t lo, int64_t hi, double p, std::vector<int32_t>& out);
// Sorts out[start..] and drops repeats.
void sort_unique_tail(std::vector<int32_t>& out, size_t start);

// Refuses a matrix the 32-bit ABI cannot index before spending memory on it.
void check_nnz_estimate(const std::string& family, double estimated_nnz);
[[noreturn]] void fail(const generator_spec& spec, const std::string& why);
void require_square(const generator_spec& spec);

// Fills one row: appends its ascending, distinct columns and their values.
using row_filler =
    std::function<void(int32_t row, std::vector<int32_t>& cols, std::vector<float>& values)>;
// Builds rows x cols from independent rows, in parallel over fixed chunks of rows. Peak memory is
// two copies of the nonzeros (the chunks and the final arrays).
csr_matrix build_rows(int32_t rows, int32_t cols, const row_filler& fill);

csr_matrix generate_stencil2d(const generator_spec& spec);
csr_matrix generate_stencil3d(const generator_spec& spec);
csr_matrix generate_block_diagonal(const generator_spec& spec);
csr_matrix generate_fem(const generator_spec& spec);
csr_matrix generate_banded(const generator_spec& spec);
csr_matrix generate_random(const generator_spec& spec);
csr_matrix generate_circuit(const generator_spec& spec);
csr_matrix generate_lp(const generator_spec& spec);
csr_matrix generate_rmat(const generator_spec& spec);

}  // namespace sparserl::gen

namespace sparserl::gen {

// Graph families: a node pattern (values unused) becomes the matrix here, renumbered by
// spec.order and with every entry expanded to a dense dof x dof block (dof = 1: the pattern).
csr_matrix finish_graph(const generator_spec& spec, const csr_matrix& pattern, int32_t dof);
// A node pattern from per-node neighbour lists (fill may append in any order, with repeats).
using neighbour_filler = std::function<void(int32_t node, std::vector<int32_t>& out)>;
csr_matrix build_pattern(int32_t nodes, const neighbour_filler& fill);
// Mesh node patterns (with the diagonal), about rows nodes: see generators_mesh.cpp.
csr_matrix mesh2d_pattern(const generator_spec& spec, int64_t nodes);
csr_matrix mesh3d_pattern(const generator_spec& spec, int64_t nodes);

csr_matrix generate_mesh2d(const generator_spec& spec);
csr_matrix generate_mesh3d(const generator_spec& spec);
csr_matrix generate_fem_mesh(const generator_spec& spec);
csr_matrix generate_knn(const generator_spec& spec);
csr_matrix generate_knn_sym(const generator_spec& spec);
csr_matrix generate_powerlaw(const generator_spec& spec);
csr_matrix generate_road(const generator_spec& spec);

}  // namespace sparserl::gen
