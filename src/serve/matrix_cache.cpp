#include "serve/matrix_cache.h"

#include "sparse/content_hash.h"

namespace sparserl {

std::shared_ptr<const cached_matrix> matrix_cache::get_or_build(
    const std::string& key, const std::function<cached_matrix()>& build) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++stats_.hits;
      return it->second->second;
    }
    ++stats_.misses;
  }
  auto built = std::make_shared<const cached_matrix>(build());
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(key);
  if (it != index_.end()) return it->second->second;  // another request built it meanwhile
  lru_.emplace_front(key, built);
  index_[key] = lru_.begin();
  ++stats_.entries;
  stats_.bytes += built->bytes;
  evict_over_budget();
  return built;
}

void matrix_cache::evict_over_budget() {
  // The newest entry stays even when it alone is over budget: the request needs it.
  while (stats_.bytes > max_bytes_ && lru_.size() > 1) {
    const auto& oldest = lru_.back();
    stats_.bytes -= oldest.second->bytes;
    --stats_.entries;
    index_.erase(oldest.first);
    lru_.pop_back();
  }
}

matrix_cache_stats matrix_cache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

cached_matrix make_cached(csr_matrix csr, std::string id) {
  cached_matrix m;
  m.bytes = static_cast<int64_t>(csr.row_ptr.size() + csr.col_idx.size()) * 4 +
            static_cast<int64_t>(csr.values.size()) * 4;
  m.csr = std::move(csr);
  m.id = std::move(id);
  return m;
}

}  // namespace sparserl
