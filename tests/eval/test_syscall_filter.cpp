// The seccomp allow-list of the sandboxed children (eval/syscall_filter.h), in forked processes:
// allowed calls run, a forbidden one ends the process with SIGSYS and its name on stderr, and an
// argument condition (openat read-only) holds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <functional>
#include <string>

#include "eval/syscall_filter.h"

namespace sparserl {
namespace {

struct child_end {
  int status = 0;
  std::string err;
};

// Runs `body` in a forked child with stderr captured; the child exits 0 when body returns.
// Only raw system calls after the filter: libc wrappers may make calls of their own.
child_end in_child(const std::function<void()>& body) {
  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) throw std::runtime_error("pipe");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fd[1], 2);
    ::close(pipe_fd[0]);
    body();
    ::syscall(SYS_exit_group, 0);
  }
  ::close(pipe_fd[1]);
  child_end out;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fd[0], buf, sizeof buf)) > 0;) out.err.append(buf, n);
  ::close(pipe_fd[0]);
  ::waitpid(pid, &out.status, 0);
  return out;
}

const std::vector<allowed_call> minimal = {"write", "exit_group"};

TEST(syscall_filter, allowed_calls_run_and_the_process_exits_normally) {
  const child_end e = in_child([] {
    if (!install_syscall_filter(minimal).empty()) ::syscall(SYS_exit_group, 7);
    ::syscall(SYS_write, 2, "fine", 4);
  });
  ASSERT_TRUE(WIFEXITED(e.status)) << e.status;
  EXPECT_EQ(WEXITSTATUS(e.status), 0);
  EXPECT_EQ(e.err, "fine");
}

TEST(syscall_filter, a_forbidden_call_kills_with_sigsys_and_is_named) {
  const child_end e = in_child([] {
    if (!install_syscall_filter(minimal).empty()) ::syscall(SYS_exit_group, 7);
    ::syscall(SYS_getppid);
    ::syscall(SYS_write, 2, "survived", 8);
  });
  ASSERT_TRUE(WIFSIGNALED(e.status)) << "exit status " << WEXITSTATUS(e.status) << ": " << e.err;
  EXPECT_EQ(WTERMSIG(e.status), SIGSYS);
  EXPECT_EQ(e.err, "sandbox: forbidden system call getppid\n");
}

TEST(syscall_filter, a_reporter_gets_the_verdict) {
  const child_end e = in_child([] {
    auto report = [](const char* verdict) {
      ::syscall(SYS_write, 2, verdict, std::char_traits<char>::length(verdict));
      ::syscall(SYS_exit_group, 3);
    };
    if (!install_syscall_filter(minimal, report).empty()) ::syscall(SYS_exit_group, 7);
    ::syscall(SYS_socket, 2, 1, 0);
  });
  ASSERT_TRUE(WIFEXITED(e.status)) << e.status;
  EXPECT_EQ(WEXITSTATUS(e.status), 3);
  EXPECT_EQ(e.err, "sandbox: forbidden system call socket");
}

TEST(syscall_filter, openat_read_only_passes_and_for_writing_is_forbidden) {
  const std::vector<allowed_call> read_only = {
      "write", "exit_group", "close", {"openat", 2, O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND, 0}};
  const child_end reading = in_child([&] {
    if (!install_syscall_filter(read_only).empty()) ::syscall(SYS_exit_group, 7);
    const long fd = ::syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
    ::syscall(SYS_exit_group, fd >= 0 ? 0 : 8);
  });
  ASSERT_TRUE(WIFEXITED(reading.status)) << reading.err;
  EXPECT_EQ(WEXITSTATUS(reading.status), 0);
  const child_end writing = in_child([&] {
    if (!install_syscall_filter(read_only).empty()) ::syscall(SYS_exit_group, 7);
    ::syscall(SYS_openat, AT_FDCWD, "/dev/null", O_WRONLY);
  });
  ASSERT_TRUE(WIFSIGNALED(writing.status)) << writing.err;
  EXPECT_EQ(writing.err, "sandbox: forbidden system call openat\n");
}

TEST(syscall_filter, in_fail_mode_unlisted_calls_return_eperm_and_always_end_calls_end) {
  const child_end e = in_child([] {
    if (!install_syscall_filter(minimal, nullptr, unlisted_call::fail, {"socket"}).empty())
      ::syscall(SYS_exit_group, 7);
    const long r = ::syscall(SYS_eventfd2, 0, 0);  // unlisted: fails, never runs
    if (r != -1 || errno != EPERM) ::syscall(SYS_exit_group, 9);
    ::syscall(SYS_write, 2, "refused;", 8);
    ::syscall(SYS_socket, 2, 1, 0);  // always_end
    ::syscall(SYS_write, 2, "survived", 8);
  });
  ASSERT_TRUE(WIFSIGNALED(e.status)) << "exit status " << WEXITSTATUS(e.status) << ": " << e.err;
  EXPECT_EQ(WTERMSIG(e.status), SIGSYS);
  EXPECT_EQ(e.err, "refused;sandbox: forbidden system call socket\n");
}

TEST(syscall_filter, verdicts_name_calls_and_unknown_names_are_refused) {
  EXPECT_EQ(forbidden_call_verdict(SYS_execve), "sandbox: forbidden system call execve");
  const child_end e = in_child([] {
    const std::string why = install_syscall_filter({"no_such_call"});
    ::syscall(SYS_write, 2, why.data(), why.size());
  });
  EXPECT_EQ(e.err, "unknown system call 'no_such_call'");
}

}  // namespace
}  // namespace sparserl
