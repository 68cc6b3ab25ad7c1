#pragma once
// A bounded FIFO of jobs feeding a fixed set of worker threads. Admission is all or nothing: a
// request's programs are queued together or not at all, so a full queue answers 429 at once
// instead of half-evaluating a request. close() refuses new jobs and returns once every queued
// job has run (the graceful drain). Thread-safe.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sparserl {

class evaluation_queue {
 public:
  using job = std::function<void()>;  // must not throw (wrap what can)

  evaluation_queue(int workers, int capacity);
  ~evaluation_queue();  // close()
  evaluation_queue(const evaluation_queue&) = delete;
  evaluation_queue& operator=(const evaluation_queue&) = delete;

  // Queues every job, or none when fewer than jobs.size() places are free or after close().
  bool try_submit(std::vector<job> jobs);
  // Refuses new jobs, runs the queued ones, joins the workers. Idempotent.
  void close();

  int capacity() const { return capacity_; }
  int workers() const { return static_cast<int>(threads_.size()); }
  int queued() const;   // waiting for a worker
  int running() const;  // on a worker now

 private:
  void work();

  const int capacity_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<job> jobs_;
  int running_ = 0;
  bool closed_ = false;
  std::vector<std::thread> threads_;
  std::once_flag joined_;
};

}  // namespace sparserl
