#pragma once
// Matrices the service has built, by content key, least recently used first out once their CSR
// bytes pass the budget. A hit skips parsing into CSR; the key doubles as the evaluator's task
// id, so the evaluator's own caches (format conversions, trial inputs, references, cuSPARSE
// times) are shared by every request with the same matrix. Entries are shared_ptrs: one evicted
// while a request still evaluates on it lives until that request ends. Thread-safe.
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "sparse/content_hash.h"  // csr_content_id
#include "sparse/csr_matrix.h"

namespace sparserl {

struct cached_matrix {
  csr_matrix csr;
  std::string id;  // content hash: the eval_task id
  int64_t bytes = 0;
};

struct matrix_cache_stats {
  int64_t hits = 0, misses = 0, entries = 0, bytes = 0;
};

class matrix_cache {
 public:
  explicit matrix_cache(int64_t max_bytes = int64_t{1} << 30) : max_bytes_(max_bytes) {}

  // The entry under `key`, else build() (outside the lock; it may throw) and keep it.
  std::shared_ptr<const cached_matrix> get_or_build(const std::string& key,
                                                    const std::function<cached_matrix()>& build);
  matrix_cache_stats stats() const;

 private:
  using lru_list = std::list<std::pair<std::string, std::shared_ptr<const cached_matrix>>>;
  void evict_over_budget();

  int64_t max_bytes_;
  mutable std::mutex mutex_;
  lru_list lru_;  // most recent first
  std::map<std::string, lru_list::iterator> index_;
  matrix_cache_stats stats_;
};

// A cached_matrix of `csr` with its size and `id`.
cached_matrix make_cached(csr_matrix csr, std::string id);

}  // namespace sparserl
