#include "model/matrix_encoding.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <string>
#include <unordered_set>

#include "sparse/error.h"

namespace sparserl {

namespace {

constexpr double pi = 3.14159265358979323846;
const double log_2_31 = 31 * std::log(2.0);  // ln of the 32-bit ABI's largest dimension / nnz

constexpr int64_t max_max_nnz = 65536;
constexpr int max_dim = 1024;
constexpr int min_dim = 10;  // 3 * 10 = 30 >= matrix_global_feature_count

// Sampling parameters (docs/matrix-embedding.md, "Sampling").
constexpr int64_t samples_per_long_row = 4;
constexpr int64_t band_pool_per_slot = 64;
constexpr int64_t block_tries = 4;
constexpr int64_t hashed_columns = 4096;

// ---- deterministic hashing and random numbers (splitmix64: the same on every platform, unlike
// the standard distributions) ----

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash_combine(uint64_t h, uint64_t v) { return splitmix64(h ^ splitmix64(v)); }

struct splitmix_rng {
  uint64_t state;
  uint64_t next() {
    state += 0x9e3779b97f4a7c15ULL;
    return splitmix64(state);
  }
  // Uniform in [0, n), n > 0 (multiply-shift; the bias is below 2^-32 for n < 2^31).
  int64_t below(int64_t n) {
    return static_cast<int64_t>(
        (static_cast<unsigned __int128>(next()) * static_cast<uint64_t>(n)) >> 64);
  }
};

// The seed depends only on the structure: dimensions, row_ptr and evenly spaced column indices.
// CSR is canonical (rows sorted, duplicates merged), so any construction order gives the same.
uint64_t structure_hash(const csr_matrix& a) {
  uint64_t h = hash_combine(0x5eed, static_cast<uint64_t>(a.rows));
  h = hash_combine(h, static_cast<uint64_t>(a.cols));
  h = hash_combine(h, static_cast<uint64_t>(a.nnz()));
  for (int32_t p : a.row_ptr) h = hash_combine(h, static_cast<uint32_t>(p));
  const int64_t n = std::min(a.nnz(), hashed_columns);
  for (int64_t k = 0; k < n; ++k)
    h = hash_combine(h, static_cast<uint32_t>(a.col_idx[static_cast<size_t>(k * a.nnz() / n)]));
  return h;
}

// ---- input checks ----

// O(rows): enough that nothing below indexes outside the arrays.
void check_csr_shape(const csr_matrix& a) {
  auto fail = [](const std::string& why) {
    throw error("encode_matrix: invalid CSR matrix: " + why);
  };
  if (a.rows < 0 || a.cols < 0) fail("negative dimensions");
  if (a.row_ptr.size() != static_cast<size_t>(a.rows) + 1) fail("row_ptr has wrong length");
  if (a.row_ptr[0] != 0) fail("row_ptr[0] != 0");
  if (a.row_ptr[a.rows] != a.nnz()) fail("row_ptr[rows] != nnz");
  for (int32_t r = 0; r < a.rows; ++r)
    if (a.row_ptr[r + 1] < a.row_ptr[r]) fail("row_ptr decreases at row " + std::to_string(r));
}

void check_features(const csr_matrix& a, const matrix_features& f) {
  if (f.rows != a.rows || f.cols != a.cols || f.nnz != a.nnz())
    throw error("encode_matrix: features describe a " + std::to_string(f.rows) + " x " +
                std::to_string(f.cols) + " matrix with " + std::to_string(f.nnz) +
                " nonzeros, not this " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                " one with " + std::to_string(a.nnz()));
}

// ---- positions ----

int64_t row_of(const csr_matrix& a, int64_t index) {
  const auto it = std::upper_bound(a.row_ptr.begin(), a.row_ptr.end(), index);
  return static_cast<int64_t>(it - a.row_ptr.begin()) - 1;
}

int64_t larger_dimension(const csr_matrix& a) { return std::max<int64_t>(a.rows, a.cols); }

// Linear position in [0, 1]: first index 0, last index 1.
double unit_position(int64_t i, int64_t extent) {
  return extent > 1 ? static_cast<double>(i) / static_cast<double>(extent - 1) : 0.0;
}

// Signed log offset in [-1, 1]: |col - row| <= n - 1, so ln(1 + |d|) / ln(n) <= 1. Logarithmic so
// that the near diagonals (what DIA and banded kernels care about) stay apart.
double unit_offset(int64_t d, int64_t n) {
  if (d == 0 || n <= 1) return 0.0;
  const double magnitude =
      std::log1p(static_cast<double>(std::abs(d))) / std::log(static_cast<double>(n));
  return d > 0 ? magnitude : -magnitude;
}

// ---- the uniform pool: nonzeros for the estimated global features and the band stratum ----

struct pooled_nonzero {
  int64_t index, row, col;
};

// Every nonzero when nnz <= size, else `size` uniform draws (with replacement): O(size log rows).
std::vector<pooled_nonzero> nonzero_pool(const csr_matrix& a, int64_t size, uint64_t seed) {
  std::vector<pooled_nonzero> pool;
  pool.reserve(static_cast<size_t>(std::min(size, a.nnz())));
  auto col = [&](int64_t index) { return int64_t{a.col_idx[static_cast<size_t>(index)]}; };
  if (a.nnz() <= size) {
    for (int32_t r = 0; r < a.rows; ++r)
      for (int64_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) pool.push_back({i, r, col(i)});
    return pool;
  }
  splitmix_rng rng{hash_combine(seed, 0x9001)};  // its own stream, apart from the sampler's
  for (int64_t k = 0; k < size; ++k) {
    const int64_t index = rng.below(a.nnz());
    pool.push_back({index, row_of(a, index), col(index)});
  }
  return pool;
}

// ---- global features ----

double log_scaled(double x) { return std::log1p(std::max(0.0, x)) / log_2_31; }

struct diagonal_fractions {
  double on_main = 0, near = 0;
};

// Fractions of the pool on the main diagonal and within ceil(n / 100) of it: exact when the pool
// holds every nonzero, else an estimate (standard error <= 0.5 / sqrt(pool size)).
diagonal_fractions diagonal_fractions_of(const csr_matrix& a,
                                         const std::vector<pooled_nonzero>& pool) {
  diagonal_fractions out;
  if (pool.empty()) return out;
  const int64_t width = std::max<int64_t>(1, (larger_dimension(a) + 99) / 100);
  int64_t on_main = 0, near = 0;
  for (const pooled_nonzero& p : pool) {
    on_main += p.col == p.row;
    near += std::abs(p.col - p.row) <= width;
  }
  out.on_main = static_cast<double>(on_main) / static_cast<double>(pool.size());
  out.near = static_cast<double>(near) / static_cast<double>(pool.size());
  return out;
}

void write_global_token(const csr_matrix& a, const matrix_features& f,
                        const std::vector<pooled_nonzero>& pool,
                        const matrix_encoding_options& options, float* out) {
  const double nnz = static_cast<double>(f.nnz);
  const double cv = f.row_length_mean > 0 ? f.row_length_std / f.row_length_mean : 0.0;
  const diagonal_fractions diag = diagonal_fractions_of(a, pool);
  const double values[matrix_global_feature_count] = {
      log_scaled(f.rows),
      log_scaled(f.cols),
      log_scaled(nnz),
      f.density,
      f.nnz > 0 ? 1.0 + std::log(f.density) / (2 * log_2_31) : 0.0,
      log_scaled(f.row_length_mean),
      log_scaled(f.row_length_std),
      log_scaled(f.row_length_min),
      log_scaled(f.row_length_max),
      cv / (1 + cv),
      f.row_length_gini,
      f.rows > 0 ? static_cast<double>(f.empty_rows) / f.rows : 0.0,
      static_cast<double>(f.bandwidth) /
          static_cast<double>(std::max<int64_t>(1, larger_dimension(a) - 1)),
      std::log1p(static_cast<double>(f.diagonal_count)) / (32 * std::log(2.0)),
      f.diagonal_fill,
      diag.on_main,
      diag.near,
      f.block_fill_2,
      f.block_fill_4,
      f.block_fill_8,
      std::log(std::max(1.0, f.ell_padding_ratio)) / log_2_31,
      std::min(nnz, static_cast<double>(options.max_nnz)) / options.max_nnz,
      // The node order and the block shape (what RCSR and odd-sized BSR depend on; the sampled
      // coordinates show neither reliably): how far x accesses stray (a random order gives ~1),
      // the share of that distance a bandwidth-reducing renumbering keeps (a mesh or kNN graph in
      // random order ~0.01, a power-law graph ~1), and the detected square block size and fill.
      std::min(1.0, 3 * f.column_distance_mean),
      f.column_distance_mean > 0
          ? std::min(1.0, f.renumbered_distance_mean / f.column_distance_mean)
          : 1.0,
      static_cast<double>(f.block_size) / 8,
      f.block_size_fill,
  };
  for (int i = 0; i < matrix_global_feature_count; ++i) out[i] = static_cast<float>(values[i]);
}

// ---- sampling (nnz > max_nnz): distinct nonzero indices into col_idx, by stratum ----

class nonzero_sampler {
 public:
  nonzero_sampler(const csr_matrix& a, const std::vector<pooled_nonzero>& pool, int64_t budget,
                  uint64_t seed)
      : a_(a), pool_(pool), budget_(budget), seed_(seed), rng_{seed} {
    chosen_.reserve(static_cast<size_t>(budget));
  }

  std::vector<int64_t> sample() {
    const int64_t long_rows = budget_ / 4, bands = budget_ / 4;
    take_longest_rows(long_rows);
    take_bands(chosen_.size() + bands);
    take_row_blocks(budget_ - long_rows - bands);
    while (static_cast<int64_t>(chosen_.size()) < budget_) take(rng_.below(a_.nnz()));
    std::sort(chosen_.begin(), chosen_.end());  // index order is (row, col) order
    return chosen_;
  }

 private:
  bool full(size_t limit) const { return chosen_.size() >= limit; }

  bool take(int64_t index) {
    if (!taken_.insert(index).second) return false;
    chosen_.push_back(index);
    return true;
  }

  // The ceil(quota / 4) longest rows (ties broken by a seeded hash of the row, not by position),
  // each at up to 4 evenly spaced positions, so the spread of a dense row shows.
  void take_longest_rows(int64_t quota) {
    const int64_t wanted = (quota + samples_per_long_row - 1) / samples_per_long_row;
    if (wanted == 0) return;
    using ranked = std::pair<int64_t, uint64_t>;  // (length, seeded hash): larger is better
    auto rank = [&](int32_t r) { return ranked{a_.row_length(r), ~hash_combine(seed_, r)}; };
    auto worse = [&](int32_t x, int32_t y) { return rank(x) > rank(y); };  // min-heap on rank
    std::priority_queue<int32_t, std::vector<int32_t>, decltype(worse)> best(worse);
    for (int32_t r = 0; r < a_.rows; ++r) {
      if (a_.row_length(r) == 0) continue;
      if (static_cast<int64_t>(best.size()) < wanted) {
        best.push(r);
      } else if (a_.row_length(r) >= a_.row_length(best.top()) && rank(r) > rank(best.top())) {
        best.pop();
        best.push(r);
      }
    }
    std::vector<int32_t> rows;
    for (; !best.empty(); best.pop()) rows.push_back(best.top());
    const size_t limit = chosen_.size() + static_cast<size_t>(quota);
    for (auto it = rows.rbegin(); it != rows.rend() && !full(limit); ++it) {
      const int64_t length = a_.row_length(*it);
      const int64_t m = std::min(samples_per_long_row, length);
      for (int64_t j = 0; j < m && !full(limit); ++j)
        take(a_.row_ptr[*it] + ((2 * j + 1) * length) / (2 * m));
    }
  }

  // Signed log2 band of col - row: 0 on the diagonal, +-k for 2^(k-1) <= |d| < 2^k.
  static int band_of(int64_t d) {
    if (d == 0) return 0;
    const int k = 64 - __builtin_clzll(static_cast<uint64_t>(std::abs(d)));
    return d > 0 ? k : -k;
  }

  // The uniform pool grouped by band; the quota goes round-robin over the bands, farthest first.
  void take_bands(size_t limit) {
    struct candidate {
      int band;
      uint64_t order;  // seeded shuffle within a band
      int64_t index;
    };
    std::vector<candidate> pool;
    pool.reserve(pool_.size());
    for (const pooled_nonzero& p : pool_)
      pool.push_back(
          {band_of(p.col - p.row), hash_combine(seed_, static_cast<uint64_t>(p.index)), p.index});
    std::sort(pool.begin(), pool.end(), [](const candidate& x, const candidate& y) {
      const int ax = std::abs(x.band), ay = std::abs(y.band);
      if (ax != ay) return ax > ay;
      if (x.band != y.band) return x.band > y.band;
      return x.order < y.order;
    });
    std::vector<std::pair<size_t, size_t>> groups;  // [cursor, end) of each band in the pool
    for (size_t i = 0; i < pool.size(); ++i)
      if (i == 0 || pool[i].band != pool[i - 1].band) groups.push_back({i, i});
    for (size_t g = 0; g < groups.size(); ++g)
      groups[g].second = g + 1 < groups.size() ? groups[g + 1].first : pool.size();
    for (bool progress = true; progress && !full(limit);) {
      progress = false;
      for (auto& [cursor, end] : groups) {
        while (cursor < end && !take(pool[cursor].index)) ++cursor;
        if (cursor < end) {
          ++cursor;
          progress = true;
        }
        if (full(limit)) return;
      }
    }
  }

  // `blocks` equal runs of rows, one uniform nonzero from each (up to 4 tries on a collision).
  void take_row_blocks(int64_t blocks) {
    for (int64_t j = 0; j < blocks; ++j) {
      const int64_t lo = a_.row_ptr[static_cast<size_t>(j * a_.rows / blocks)];
      const int64_t hi = a_.row_ptr[static_cast<size_t>((j + 1) * a_.rows / blocks)];
      if (lo == hi) continue;
      for (int64_t t = 0; t < block_tries && !take(lo + rng_.below(hi - lo)); ++t) {
      }
    }
  }

  const csr_matrix& a_;
  const std::vector<pooled_nonzero>& pool_;
  int64_t budget_;
  uint64_t seed_;
  splitmix_rng rng_;
  std::vector<int64_t> chosen_;
  std::unordered_set<int64_t> taken_;
};

// The coordinates of tokens 1..max_nnz: a stratified sample, or every nonzero repeated cyclically.
std::vector<std::pair<int64_t, int64_t>> sample_coords(const csr_matrix& a,
                                                       const std::vector<pooled_nonzero>& pool,
                                                       int64_t budget, uint64_t seed) {
  std::vector<std::pair<int64_t, int64_t>> coords;
  if (a.nnz() == 0) return coords;
  coords.reserve(static_cast<size_t>(budget));
  if (a.nnz() > budget) {
    for (int64_t index : nonzero_sampler(a, pool, budget, seed).sample())
      coords.emplace_back(row_of(a, index), a.col_idx[static_cast<size_t>(index)]);
    return coords;
  }
  for (int32_t r = 0; r < a.rows; ++r)
    for (int64_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i)
      coords.emplace_back(r, a.col_idx[static_cast<size_t>(i)]);
  for (size_t i = 0; coords.size() < static_cast<size_t>(budget); ++i) coords.push_back(coords[i]);
  return coords;
}

}  // namespace

void validate_encoding_options(const matrix_encoding_options& o) {
  const std::string where = "matrix_encoding_options: ";
  if (o.max_nnz < 1 || o.max_nnz > max_max_nnz)
    throw error(where + "max_nnz must be in [1, " + std::to_string(max_max_nnz) + "], got " +
                std::to_string(o.max_nnz));
  if (o.dim < min_dim || o.dim > max_dim || o.dim % 2 != 0)
    throw error(where + "dim must be even and in [" + std::to_string(min_dim) + ", " +
                std::to_string(max_dim) + "] (3 * dim holds the " +
                std::to_string(matrix_global_feature_count) + " global features), got " +
                std::to_string(o.dim));
  if (!std::isfinite(o.base) || o.base <= 1.0)
    throw error(where + "base must be a finite number > 1, got " + std::to_string(o.base));
}

void sinusoid(double x, const matrix_encoding_options& options, float* out) {
  for (int k = 0; k < options.dim / 2; ++k) {
    const double omega = pi / 2 * std::pow(options.base, 2.0 * k / options.dim);
    out[2 * k] = static_cast<float>(std::sin(omega * x));
    out[2 * k + 1] = static_cast<float>(std::cos(omega * x));
  }
}

matrix_encoding encode_matrix(const csr_matrix& a, const matrix_encoding_options& options) {
  validate_encoding_options(options);
  check_csr_shape(a);
  return encode_matrix(a, compute_features(a), options);
}

matrix_encoding encode_matrix(const csr_matrix& a, const matrix_features& features,
                              const matrix_encoding_options& options) {
  validate_encoding_options(options);
  check_csr_shape(a);
  check_features(a, features);
  matrix_encoding e;
  e.tokens = 1 + int64_t{options.max_nnz};
  e.feature_dim = 3 * int64_t{options.dim};
  e.features.assign(static_cast<size_t>(e.tokens * e.feature_dim), 0.0f);
  const uint64_t seed = structure_hash(a);
  const std::vector<pooled_nonzero> pool =
      nonzero_pool(a, band_pool_per_slot * options.max_nnz, seed);
  write_global_token(a, features, pool, options, e.features.data());
  e.coords = sample_coords(a, pool, options.max_nnz, seed);
  const int64_t n = larger_dimension(a);
  for (size_t i = 0; i < e.coords.size(); ++i) {
    const auto [row, col] = e.coords[i];
    float* token = e.features.data() + static_cast<int64_t>(i + 1) * e.feature_dim;
    sinusoid(unit_position(row, a.rows), options, token);
    sinusoid(unit_position(col, a.cols), options, token + options.dim);
    sinusoid(unit_offset(col - row, n), options, token + 2 * options.dim);
  }
  return e;
}

}  // namespace sparserl
