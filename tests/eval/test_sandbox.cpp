// The one-shot sandbox with ordinary programs (sh, cat, id, env) standing in for hostile ones.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "eval/sandbox.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;

std::string text(const std::vector<char>& v) { return std::string(v.begin(), v.end()); }

sandbox_result sh(const std::string& script, sandbox_options o = {}) {
  return run_sandboxed({"/bin/sh", "-c", script}, {}, o);
}

bool has_note(const sandbox_result& r, const std::string& prefix) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
}

size_t count_entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(sandbox, child_gets_an_empty_environment_and_sandbox_identity) {
  const sandbox_result env = run_sandboxed({"/usr/bin/env"}, {}, {});
  ASSERT_TRUE(env.started) << env.failure;
  EXPECT_EQ(env.exit_code, 0);
  EXPECT_EQ(text(env.out), "");
  const sandbox_result id = run_sandboxed({"/usr/bin/id", "-u"}, {}, {});
  ASSERT_EQ(id.exit_code, 0) << id.err;
  const uid_t expected = sandbox_can_drop_privileges() ? 65534 : ::geteuid();
  EXPECT_EQ(text(id.out), std::to_string(expected) + "\n");
}

TEST(sandbox, working_directory_is_fresh_empty_and_not_ours_to_write) {
  sandbox_options o;
  o.processes = -1;  // sh needs to fork for ls
  const sandbox_result r =
      sh("ls -A 2>/dev/null | wc -l; touch probe 2>/dev/null && echo wrote", o);
  ASSERT_TRUE(r.started) << r.failure;
  if (sandbox_can_drop_privileges())
    EXPECT_EQ(text(r.out), "0\n");  // nothing there, and nobody cannot create files in it
  else
    EXPECT_EQ(text(r.out).substr(0, 2), "0\n");
}

TEST(sandbox, network_namespace_has_only_loopback) {
  const sandbox_result r = run_sandboxed({"/bin/cat", "/proc/net/dev"}, {}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (has_note(r, "network not isolated")) GTEST_SKIP() << r.notes.front();
  const std::string out = text(r.out);
  EXPECT_NE(out.find("lo:"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), ':'), 1) << out;  // one interface line
}

TEST(sandbox, fork_fails_without_processes) {
  if (::geteuid() == 0 && !sandbox_can_drop_privileges()) GTEST_SKIP() << "root ignores NPROC";
  const sandbox_result r = sh("/bin/true && echo forked");
  EXPECT_EQ(text(r.out), "");
  EXPECT_NE(r.exit_code, 0);
}

// stall_timeout_s is a deadline per step for a child that reports as it goes (the CPU emulator
// reports each trial): one that keeps reporting runs on, one that goes quiet is killed then.
TEST(sandbox, stall_timeout_kills_a_child_that_stops_reporting) {
  sandbox_options o;
  o.processes = -1;
  o.wall_timeout_s = 20;
  o.stall_timeout_s = 0.6;
  const sandbox_result steady = sh("for i in 1 2 3 4 5; do echo $i; sleep 0.3; done", o);
  EXPECT_FALSE(steady.timed_out);
  EXPECT_EQ(steady.exit_code, 0);
  EXPECT_EQ(text(steady.out), "1\n2\n3\n4\n5\n");

  const sandbox_result quiet = sh("echo 1; sleep 0.3; echo 2; sleep 30", o);
  EXPECT_TRUE(quiet.timed_out);
  EXPECT_TRUE(quiet.stalled);
  EXPECT_EQ(text(quiet.out), "1\n2\n");
  EXPECT_LT(quiet.wall_s, 0.3 + 0.6 + 1.0);  // killed 0.6 s after its last report, not at 20 s
}

TEST(sandbox, timeout_kills_the_whole_process_group) {
  sandbox_options o;
  o.processes = -1;
  o.wall_timeout_s = 0.5;
  const sandbox_result r = sh("sleep 37 & echo $!; wait", o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.describe(0.5), "timeout after 0.5 s");
  const std::string pid = text(r.out).substr(0, text(r.out).find('\n'));
  ASSERT_FALSE(pid.empty());
  // The background sleep is gone (or a zombie waiting for init), not sleeping on. SIGKILL is
  // delivered asynchronously: a loaded machine may still show it running ('R') for a moment.
  char state = 'X';
  std::string line;
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + pid + "/stat");
    if (!std::getline(stat, line)) {
      state = 'X';  // reaped
      break;
    }
    state = line[line.rfind(')') + 2];
    if (state == 'Z' || state == 'X') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(state == 'Z' || state == 'X') << line;
}

TEST(sandbox, file_size_limit_stops_large_writes) {
  const fs::path dir =
      fs::temp_directory_path() / ("sparserl-sandbox-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  sandbox_options o;
  o.processes = -1;
  o.work_dir = dir.string();
  o.writable_work_dir = true;
  o.file_size_bytes = 4096;
  sh("head -c 100000 /dev/zero > big", o);
  ASSERT_TRUE(fs::exists(dir / "big"));
  EXPECT_LE(fs::file_size(dir / "big"), 4096u);
  fs::remove_all(dir);
}

TEST(sandbox, stdin_and_stdout_carry_megabytes_both_ways) {
  std::vector<char> input(3 << 20);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<char>(i * 31 + i / 4096);
  const sandbox_result r = run_sandboxed({"/bin/cat"}, input, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == input);
}

TEST(sandbox, output_beyond_the_cap_is_dropped) {
  sandbox_options o;
  o.max_stdout_bytes = 1000;
  const sandbox_result r = run_sandboxed({"/usr/bin/head", "-c", "1000000", "/dev/zero"}, {}, o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.out_truncated);
}

TEST(sandbox, start_failures_are_reported_not_thrown) {
  const sandbox_result r = run_sandboxed({"/nonexistent/program"}, {}, {});
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.failure.find("execve"), std::string::npos) << r.failure;
  EXPECT_THROW(run_sandboxed({"relative/path"}, {}, {}), std::exception);
}

TEST(sandbox, runs_leak_no_descriptors_children_or_directories) {
  // A private TMPDIR, so that other processes' sandboxes do not count.
  const fs::path tmp =
      fs::temp_directory_path() / ("sparserl-leak-test-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  const std::string saved = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const size_t fds = count_entries("/proc/self/fd");
  for (int i = 0; i < 20; ++i) {
    const sandbox_result r = run_sandboxed({"/bin/true"}, {'x'}, {});
    ASSERT_EQ(r.exit_code, 0);
  }
  EXPECT_EQ(count_entries("/proc/self/fd"), fds);
  EXPECT_EQ(count_entries(tmp), 0u);               // every work directory removed
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);  // nothing left to reap
  if (saved.empty())
    ::unsetenv("TMPDIR");
  else
    ::setenv("TMPDIR", saved.c_str(), 1);
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace sparserl
