// train/data_parallel.h: the launcher's variables, the batch shards, and the collectives across
// real processes. The two-rank cases re-run this test binary as two children (RANK 0 and 1 over
// gloo on loopback) that each run one hidden worker test; the parent checks both passed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "free_port.h"
#include "sparse/error.h"
#include "train/data_parallel.h"

namespace sparserl::train {
namespace {

// Sets the launcher's variables for one test, and unsets them afterwards.
class launch_variables : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"})
      ::unsetenv(v);
  }
  static void set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }
  static std::string error_of() {
    try {
      launch_env_from_environment();
    } catch (const error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(launch_variables, none_set_is_a_single_process) {
  const launch_env e = launch_env_from_environment();
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.rank, 0);
  data_parallel alone;
  EXPECT_EQ(alone.world_size(), 1);
  EXPECT_STREQ(alone.backend(), "none");
  EXPECT_EQ(alone.sum({1.5, -2}), (std::vector<double>{1.5, -2}));
  EXPECT_EQ(alone.shard({7, 3, 5}), (std::vector<int64_t>{7, 3, 5}));
}

TEST_F(launch_variables, torchrun_variables_are_read) {
  set("WORLD_SIZE", "4");
  set("RANK", "3");
  set("LOCAL_WORLD_SIZE", "2");
  set("LOCAL_RANK", "1");
  set("MASTER_ADDR", "10.0.0.7");
  set("MASTER_PORT", "29512");
  const launch_env e = launch_env_from_environment();
  EXPECT_EQ(e.world_size, 4);
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.master_addr, "10.0.0.7");
  EXPECT_EQ(e.master_port, 29512);
}

TEST_F(launch_variables, bad_values_name_the_variable) {
  set("WORLD_SIZE", "2");
  EXPECT_NE(error_of().find("RANK: not set, but WORLD_SIZE=2"), std::string::npos);
  set("RANK", "2");
  EXPECT_NE(error_of().find("RANK=2: expected an integer in [0, 1]"), std::string::npos);
  set("RANK", "1");
  set("MASTER_PORT", "80x");
  EXPECT_NE(error_of().find("MASTER_PORT=80x"), std::string::npos);
  set("WORLD_SIZE", "0");
  EXPECT_NE(error_of().find("WORLD_SIZE=0"), std::string::npos);
}

// Runs the hidden test `worker` in `world` child processes of this binary, each with its RANK;
// expects every one to pass. The environment is built before fork: the child only execs.
void run_ranks(const std::string& worker, int world) {
  const std::string port = std::to_string(testing::free_port());
  std::string filter = "--gtest_filter=data_parallel_worker.DISABLED_" + worker;
  std::string name = "worker", all = "--gtest_also_run_disabled_tests";
  std::vector<pid_t> children;
  for (int rank = 0; rank < world; ++rank) {
    std::vector<std::string> env = {"WORLD_SIZE=" + std::to_string(world),
                                    "RANK=" + std::to_string(rank), "MASTER_ADDR=127.0.0.1",
                                    "MASTER_PORT=" + port, "OMP_NUM_THREADS=1"};
    for (char** e = environ; *e; ++e) env.emplace_back(*e);  // later duplicates lose
    std::vector<char*> envp, argv = {name.data(), filter.data(), all.data(), nullptr};
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::execve("/proc/self/exe", argv.data(), envp.data());
      ::_exit(127);
    }
    children.push_back(pid);
  }
  for (size_t rank = 0; rank < children.size(); ++rank) {
    int status = 0;
    ::waitpid(children[rank], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "rank " << rank << " of " << worker << " failed (its output is above)";
  }
}

TEST(data_parallel_gloo, two_ranks_sum_broadcast_and_reduce_gradients_in_buckets) {
  if (!data_parallel::has_backend(torch::kCPU)) GTEST_SKIP() << "this libtorch has no gloo backend";
  run_ranks("collectives", 2);
}

TEST(data_parallel_worker, DISABLED_collectives) {
  data_parallel dp(launch_env_from_environment(), torch::kCPU, 60);
  ASSERT_EQ(dp.world_size(), 2);
  EXPECT_STREQ(dp.backend(), "gloo");
  const double r = dp.rank();
  EXPECT_EQ(dp.sum({r + 1, 10, -r}), (std::vector<double>{3, 20, -1}));
  EXPECT_EQ(dp.shard({10, 11, 12, 13, 14}),
            dp.rank() == 0 ? (std::vector<int64_t>{10, 12, 14}) : (std::vector<int64_t>{11, 13}));

  torch::Tensor w = torch::full({3}, r + 5);
  dp.broadcast_from_main({w});
  EXPECT_TRUE(torch::equal(w, torch::full({3}, 5.0)));

  // Three float gradients in two buckets (12 + 8 bytes, 16 bytes per bucket), one double
  // gradient in its own, and one parameter whose gradient only rank 0 has (rank 1: zeros).
  std::vector<torch::Tensor> params = {
      torch::zeros({3}).requires_grad_(), torch::zeros({2}).requires_grad_(),
      torch::zeros({2}).requires_grad_(), torch::zeros({2}, torch::kDouble).requires_grad_(),
      torch::zeros({1}).requires_grad_(), torch::zeros({4})};  // the last is frozen
  for (size_t i = 0; i < 4; ++i)
    params[i].mutable_grad() = torch::full_like(params[i], (r + 1) * static_cast<double>(i + 1));
  if (dp.rank() == 0) params[4].mutable_grad() = torch::full({1}, 7.0);
  dp.sum_gradients(params, 16);
  for (size_t i = 0; i < 4; ++i)  // (1 + 2) * (i + 1)
    EXPECT_TRUE(torch::equal(params[i].grad(), torch::full_like(params[i], 3.0 * (i + 1)))) << i;
  EXPECT_TRUE(torch::equal(params[4].grad(), torch::full({1}, 7.0)));
  EXPECT_FALSE(params[5].grad().defined());
  dp.barrier();
}

TEST(data_parallel_gloo, a_rank_that_never_comes_is_a_clear_error) {
  if (!data_parallel::has_backend(torch::kCPU)) GTEST_SKIP() << "this libtorch has no gloo backend";
  launch_env e;
  e.world_size = 2;
  e.master_port = testing::free_port();
  try {
    data_parallel dp(e, torch::kCPU, 1);
    FAIL() << "joined a group of two alone";
  } catch (const error& ex) {
    EXPECT_NE(std::string(ex.what()).find("rank 0 of 2 could not meet the others at 127.0.0.1"),
              std::string::npos)
        << ex.what();
  }
}

}  // namespace
}  // namespace sparserl::train
