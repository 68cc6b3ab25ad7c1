#pragma once
// SHA-256 (OpenSSL) of byte ranges: names matrices by content, so a cache hit can never hand one
// client's request another matrix (a 64-bit hash could be made to collide on purpose).
#include <string>
#include <string_view>
#include <vector>

#include "sparse/csr_matrix.h"

namespace sparserl {

// Lower-case hex digest of the concatenation of `parts`, each prefixed by its length (so
// {"ab", "c"} and {"a", "bc"} differ).
std::string sha256_hex(const std::vector<std::string_view>& parts);

// The bytes of a vector of trivially copyable values, for sha256_hex.
template <typename T>
std::string_view bytes_of(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

// "sha256:<hex>" of a CSR matrix's shape, row_ptr, col_idx and values: what caches of references,
// uploads and baselines are keyed by, so a reused name can never reach another matrix's entry.
std::string csr_content_id(const csr_matrix& csr);

}  // namespace sparserl
