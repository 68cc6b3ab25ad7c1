#include "train/data_split.h"

#include <cstdio>

#include "sparse/error.h"

namespace sparserl::train {

namespace {

constexpr uint64_t fnv_offset = 0xcbf29ce484222325ull, fnv_prime = 0x100000001b3ull;

uint64_t fnv1a(uint64_t h, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * fnv_prime;
  return h;
}

uint64_t finalise(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t stable_hash(std::string_view bytes) {
  return finalise(fnv1a(fnv_offset, bytes.data(), bytes.size()));
}

uint64_t matrix_structure_hash(const csr_matrix& matrix) {
  // Little-endian int32 words on every machine we build for; the shape goes first so that
  // matrices differing only in trailing empty columns hash apart.
  const int32_t shape[2] = {matrix.rows, matrix.cols};
  uint64_t h = fnv1a(fnv_offset, shape, sizeof shape);
  h = fnv1a(h, matrix.row_ptr.data(), matrix.row_ptr.size() * sizeof(int32_t));
  h = fnv1a(h, matrix.col_idx.data(), matrix.col_idx.size() * sizeof(int32_t));
  return finalise(h);
}

std::string split_of(uint64_t hash, double val_fraction) {
  if (!(val_fraction >= 0 && val_fraction <= 1)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", val_fraction);
    throw error(std::string("--val-fraction ") + text + ": expected a fraction in 0..1");
  }
  const double unit = static_cast<double>(hash >> 11) * 0x1.0p-53;  // uniform in [0, 1)
  return unit < val_fraction ? "val" : "train";
}

}  // namespace sparserl::train
