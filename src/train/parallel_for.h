#pragma once
// fn(i) for every i in [0, n) on `threads` threads (the caller's among them), each index once;
// the first exception any call throws is rethrown here after every thread has stopped.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sparserl::train {

template <class Fn>
void parallel_for(size_t n, int threads, Fn&& fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex first_mutex;
  auto work = [&] {
    for (size_t i = next++; i < n && !failed; i = next++) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(first_mutex);
        if (!first) first = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  const size_t extra = std::min(n, static_cast<size_t>(std::max(1, threads))) - (n > 0 ? 1 : 0);
  for (size_t t = 0; t < extra; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

// One per hardware thread (at least one): the default where a command's --threads is 0.
inline int hardware_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace sparserl::train
