#include "eval/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "sparse/error.h"

extern char** environ;

namespace sparserl {

namespace {

std::string errno_text() { return std::strerror(errno); }

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw error("worker process: fcntl(O_NONBLOCK) failed: " + errno_text());
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// This process's environment with `extra` ("KEY=VALUE") replacing or adding entries.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& x : extra) replaced |= x.substr(0, x.find('=')) == key;
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (std::string& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

int remaining_ms(worker_process::clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - worker_process::clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(left.count() + 1, 60'000));
}

}  // namespace

std::string describe_exit(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "wait status " + std::to_string(wait_status);
}

worker_process::worker_process(const std::vector<std::string>& argv,
                               const std::vector<std::string>& extra_env, int64_t max_log_bytes)
    : max_log_bytes_(max_log_bytes) {
  if (argv.empty()) throw error("worker process: empty command");
  int sv[2], err[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw error("worker process: socketpair failed: " + errno_text());
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw error("worker process: pipe failed: " + errno_text());
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears close-on-exec on the targets; every other descriptor of ours stays closed there.
  posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<std::string> args = argv, env = child_environment(extra_env);
  std::vector<char*> c_args = c_strings(args), c_env = c_strings(env);
  const int rc = ::posix_spawn(&pid_, c_args[0], &actions, nullptr, c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(sv[1]);
  ::close(err[1]);
  socket_ = sv[0];
  log_fd_ = err[0];
  if (rc != 0) {
    pid_ = -1;
    close_fd(socket_);
    close_fd(log_fd_);
    throw error("worker process: cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  set_nonblocking(socket_);
  set_nonblocking(log_fd_);
}

worker_process::~worker_process() {
  stop();
  close_fd(log_fd_);
}

void worker_process::drain_log() {
  char buf[8192];
  while (log_fd_ >= 0) {
    const ssize_t r = ::read(log_fd_, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return;  // EAGAIN: nothing more for now
    if (r == 0) {       // the child closed its stderr (it exited)
      close_fd(log_fd_);
      return;
    }
    const int64_t room = max_log_bytes_ - static_cast<int64_t>(log_.size());
    const int64_t keep = std::max<int64_t>(0, std::min<int64_t>(room, r));
    log_.append(buf, static_cast<size_t>(keep));
    log_dropped_ += r - keep;
  }
}

std::string worker_process::take_log() {
  drain_log();
  std::string out = std::move(log_);
  if (log_dropped_ > 0)
    out += "\n[" + std::to_string(log_dropped_) + " more bytes of worker stderr dropped]\n";
  log_.clear();
  log_dropped_ = 0;
  return out;
}

bool worker_process::wait_ready(short events, clock::time_point deadline) {
  for (;;) {
    pollfd fds[2] = {{socket_, events, 0}, {log_fd_, POLLIN, 0}};
    const int n = ::poll(fds, log_fd_ >= 0 ? 2 : 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw error("worker process: poll failed: " + errno_text());
    if (log_fd_ >= 0 && fds[1].revents) drain_log();
    if (fds[0].revents) return true;  // ready, or hung up / error: the next call says which
    if (n == 0 && clock::now() >= deadline) return false;
  }
}

worker_process::io_status worker_process::read_exact(char* p, size_t n,
                                                     clock::time_point deadline) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(socket_, p + got, n - got, MSG_DONTWAIT);
    if (r > 0) {
      got += static_cast<size_t>(r);
      continue;
    }
    if (r == 0) return io_status::closed;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return io_status::closed;
    if (!wait_ready(POLLIN, deadline)) return io_status::timeout;
  }
  return io_status::ok;
}

worker_process::io_status worker_process::send(const std::vector<char>& payload,
                                               clock::time_point deadline) {
  if (socket_ < 0) return io_status::closed;
  const uint64_t size = payload.size();
  const char* parts[2] = {reinterpret_cast<const char*>(&size), payload.data()};
  const size_t lengths[2] = {sizeof(size), payload.size()};
  for (int i = 0; i < 2; ++i) {
    size_t sent = 0;
    while (sent < lengths[i]) {
      // MSG_NOSIGNAL: a dead child is a closed status here, not a SIGPIPE for the whole trainer.
      const ssize_t w =
          ::send(socket_, parts[i] + sent, lengths[i] - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0) {
        sent += static_cast<size_t>(w);
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return io_status::closed;
      if (!wait_ready(POLLOUT, deadline)) return io_status::timeout;
    }
  }
  return io_status::ok;
}

worker_process::io_status worker_process::receive(std::vector<char>& payload,
                                                  clock::time_point deadline, uint64_t max_bytes) {
  if (socket_ < 0) return io_status::closed;
  uint64_t size = 0;
  io_status s = read_exact(reinterpret_cast<char*>(&size), sizeof(size), deadline);
  if (s != io_status::ok) return s;
  if (size > max_bytes) return io_status::invalid;  // a lying child: no allocation for it
  payload.resize(size);
  return read_exact(payload.data(), size, deadline);
}

std::string worker_process::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return "";
  close_fd(socket_);  // a well-behaved worker sees EOF and exits by itself
  int status = 0;
  pid_t r = 0;
  const auto until = clock::now() + grace;
  while ((r = ::waitpid(pid_, &status, WNOHANG)) == 0 && clock::now() < until) {
    drain_log();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const bool killed = r == 0;
  if (killed) {
    ::kill(pid_, SIGKILL);
    while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  drain_log();
  if (killed && grace.count() > 0) return killed_after_grace;
  return r > 0 ? describe_exit(status) : "already reaped";
}

}  // namespace sparserl
