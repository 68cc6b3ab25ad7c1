// The bounded queue: all-or-nothing admission, FIFO through the workers, close() drains.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "serve/evaluation_queue.h"

namespace sparserl {
namespace {

// Jobs that block until the test opens the gate, so the queue's state is known exactly.
class gate {
 public:
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
  }
  void wait_for_waiters(int n) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ >= n; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool open_ = false;
};

TEST(evaluation_queue, admission_is_all_or_nothing) {
  gate g;
  std::atomic<int> done{0};
  evaluation_queue q(1, 3);
  auto blocking = [&] {
    g.wait();
    ++done;
  };
  ASSERT_TRUE(q.try_submit({blocking}));
  g.wait_for_waiters(1);  // the worker holds the first job: the queue is empty again
  EXPECT_EQ(q.running(), 1);
  EXPECT_TRUE(q.try_submit({blocking, blocking}));
  EXPECT_EQ(q.queued(), 2);
  EXPECT_FALSE(q.try_submit({blocking, blocking}));  // 2 + 2 > 3: none of them is queued
  EXPECT_EQ(q.queued(), 2);
  EXPECT_TRUE(q.try_submit({blocking}));
  EXPECT_FALSE(q.try_submit({blocking}));
  g.open();
  q.close();
  EXPECT_EQ(done, 4);
}

TEST(evaluation_queue, close_runs_every_queued_job_then_refuses) {
  gate g;
  std::mutex order_mutex;
  std::vector<int> order;
  evaluation_queue q(1, 16);
  ASSERT_TRUE(q.try_submit({[&] { g.wait(); }}));
  g.wait_for_waiters(1);
  std::vector<evaluation_queue::job> jobs;
  for (int i = 0; i < 10; ++i)
    jobs.push_back([&, i] {
      std::lock_guard<std::mutex> lock(order_mutex);
      order.push_back(i);
    });
  ASSERT_TRUE(q.try_submit(std::move(jobs)));
  g.open();
  q.close();
  ASSERT_EQ(order.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(order[i], i);  // first in, first out
  EXPECT_FALSE(q.try_submit({[] {}}));
  EXPECT_EQ(q.queued(), 0);
}

TEST(evaluation_queue, several_workers_share_the_jobs) {
  gate g;
  evaluation_queue q(3, 8);
  ASSERT_TRUE(q.try_submit({[&] { g.wait(); }, [&] { g.wait(); }, [&] { g.wait(); }}));
  g.wait_for_waiters(3);  // only reachable when three threads run at once
  EXPECT_EQ(q.running(), 3);
  g.open();
  q.close();
  EXPECT_EQ(q.running(), 0);
}

}  // namespace
}  // namespace sparserl
