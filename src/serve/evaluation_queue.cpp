#include "serve/evaluation_queue.h"

#include "sparse/error.h"

namespace sparserl {

evaluation_queue::evaluation_queue(int workers, int capacity) : capacity_(capacity) {
  if (workers < 1) throw error("--threads must be at least 1");
  if (capacity < 1) throw error("--queue must be at least 1");
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

evaluation_queue::~evaluation_queue() { close(); }

bool evaluation_queue::try_submit(std::vector<job> jobs) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || jobs_.size() + jobs.size() > static_cast<size_t>(capacity_)) return false;
    for (job& j : jobs) jobs_.push_back(std::move(j));
  }
  ready_.notify_all();
  return true;
}

void evaluation_queue::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
  std::call_once(joined_, [this] {
    for (std::thread& t : threads_) t.join();
  });
}

int evaluation_queue::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(jobs_.size());
}

int evaluation_queue::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

void evaluation_queue::work() {
  for (;;) {
    job next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return closed_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // closed and drained
      next = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
    }
    next();
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
  }
}

}  // namespace sparserl
