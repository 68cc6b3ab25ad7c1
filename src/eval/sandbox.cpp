#include "eval/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "sparse/error.h"

namespace sparserl {

namespace {

using clock_type = std::chrono::steady_clock;

// Steps of the child's setup between fork and exec; a failure is reported through the status
// pipe as {step, errno, fatal}.
enum step : int32_t {
  step_group,
  step_signals,
  step_fds,
  step_chdir,
  step_network,
  step_rlimit,
  step_setgroups,
  step_setgid,
  step_setuid,
  step_nproc,
  step_no_new_privs,
  step_death_signal,
  step_exec,
};
const char* step_name(int32_t s) {
  static const char* names[] = {"setpgid",
                                "signal reset",
                                "descriptor setup",
                                "chdir to the work directory",
                                "unshare(CLONE_NEWNET)",
                                "setrlimit",
                                "setgroups",
                                "setgid",
                                "setuid",
                                "setrlimit(RLIMIT_NPROC)",
                                "prctl(PR_SET_NO_NEW_PRIVS)",
                                "prctl(PR_SET_PDEATHSIG)",
                                "execve"};
  return s >= 0 && s <= step_exec ? names[s] : "setup";
}

struct status_record {
  int32_t step, err, fatal;
};

struct identity {
  bool drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

identity nobody_identity() {
  identity id;
  if (::geteuid() != 0) return id;
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwnam_r("nobody", &pw, buf.data(), buf.size(), &found) != 0 || !found) return id;
  id.drop = true;
  id.uid = pw.pw_uid;
  id.gid = pw.pw_gid;
  return id;
}

class fd_holder {
 public:
  fd_holder() = default;
  explicit fd_holder(int fd) : fd_(fd) {}
  ~fd_holder() { reset(); }
  fd_holder(const fd_holder&) = delete;
  fd_holder& operator=(const fd_holder&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int* out() { return &fd_; }

 private:
  int fd_ = -1;
};

struct pipe_pair {
  fd_holder read, write;
  pipe_pair() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0)
      throw error(std::string("sandbox: pipe2 failed: ") + std::strerror(errno));
    *read.out() = p[0];
    *write.out() = p[1];
  }
};

// Everything the child needs, prepared before fork: after it only async-signal-safe calls.
struct child_plan {
  char* const* argv;
  char* const* envp;
  const char* work_dir;
  int in, out, err, status;
  rlimit cpu, as, fsize, nofile, nproc;
  bool limit_as, limit_nproc, isolate_network;
  identity id;
};

[[noreturn]] void child_setup_and_exec(const child_plan& p) noexcept {
  int status_fd = p.status;
  auto report = [&status_fd](int32_t s, bool fatal) {
    const status_record r{s, errno, fatal ? 1 : 0};
    (void)!::write(status_fd, &r, sizeof(r));
    if (fatal) ::_exit(127);
  };
  if (::setpgid(0, 0) != 0) report(step_group, true);
  sigset_t none;
  sigemptyset(&none);
  if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) report(step_signals, true);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);  // ignored ones too
  // Move our descriptors above 10 first, so that the dup2s below cannot clobber each other.
  const int in = ::fcntl(p.in, F_DUPFD_CLOEXEC, 10), out = ::fcntl(p.out, F_DUPFD_CLOEXEC, 10);
  const int err = ::fcntl(p.err, F_DUPFD_CLOEXEC, 10), st = ::fcntl(p.status, F_DUPFD_CLOEXEC, 10);
  if (in < 0 || out < 0 || err < 0 || st < 0) report(step_fds, true);
  status_fd = st;
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0 || ::dup3(st, 3, O_CLOEXEC) < 0)
    report(step_fds, true);
  status_fd = 3;
  if (::close_range(4, ~0u, 0) != 0) {
    for (int fd = 4; fd < 65536; ++fd) ::close(fd);
  }
  if (::chdir(p.work_dir) != 0) report(step_chdir, true);
  if (p.isolate_network && ::unshare(CLONE_NEWNET) != 0) report(step_network, false);
  const rlimit no_core{0, 0};
  if (::setrlimit(RLIMIT_CORE, &no_core) != 0 || ::setrlimit(RLIMIT_CPU, &p.cpu) != 0 ||
      ::setrlimit(RLIMIT_FSIZE, &p.fsize) != 0 || ::setrlimit(RLIMIT_NOFILE, &p.nofile) != 0 ||
      (p.limit_as && ::setrlimit(RLIMIT_AS, &p.as) != 0))
    report(step_rlimit, true);
  if (p.id.drop) {
    if (::setgroups(0, nullptr) != 0) report(step_setgroups, true);
    if (::setgid(p.id.gid) != 0) report(step_setgid, true);
    if (::setuid(p.id.uid) != 0) report(step_setuid, true);
  }
  // After setuid: the limit counts the processes of the user we now are.
  if (p.limit_nproc && ::setrlimit(RLIMIT_NPROC, &p.nproc) != 0) report(step_nproc, true);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) report(step_no_new_privs, false);
  // After setuid, which clears it: the child dies with us.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) report(step_death_signal, false);
  ::execve(p.argv[0], p.argv, p.envp);
  report(step_exec, true);
  ::_exit(127);
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (std::string& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

rlimit limit_of(uint64_t v) { return rlimit{static_cast<rlim_t>(v), static_cast<rlim_t>(v)}; }

int ms_until(clock_type::time_point t, int cap_ms) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - clock_type::now());
  return static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, cap_ms));
}

bool has_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

// Appends what `fd` has to `sink` up to `cap` bytes (the rest is read and dropped). Returns
// false at end of file or on error.
template <typename Sink>
bool drain(int fd, Sink& sink, int64_t cap, bool& truncated) {
  char buf[65536];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
    if (r == 0) return false;
    const int64_t room = std::max<int64_t>(0, cap - static_cast<int64_t>(sink.size()));
    const int64_t keep = std::min<int64_t>(room, r);
    sink.insert(sink.end(), buf, buf + keep);
    truncated |= keep < r;
  }
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw error(std::string("sandbox: fcntl failed: ") + std::strerror(errno));
}

// The child's setup records until exec (end of file) or until it died trying.
void read_status(int fd, clock_type::time_point deadline, sandbox_result& r) {
  std::vector<char> bytes;
  bool truncated = false;
  set_nonblocking(fd);
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    const int n = ::poll(&pfd, 1, ms_until(deadline, 1000));
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && !drain(fd, bytes, 4096, truncated)) break;
    if (clock_type::now() >= deadline) break;
  }
  r.started = true;
  for (size_t at = 0; at + sizeof(status_record) <= bytes.size(); at += sizeof(status_record)) {
    status_record rec;
    std::memcpy(&rec, bytes.data() + at, sizeof(rec));
    const std::string what = std::string(step_name(rec.step)) + ": " + std::strerror(rec.err);
    if (rec.fatal) {
      r.started = false;
      r.failure = "sandbox: " + what;
    } else if (rec.step == step_network) {
      r.notes.push_back("network not isolated: " + what);
    } else {
      r.notes.push_back("sandbox: " + what);
    }
  }
}

class temp_dir {
 public:
  temp_dir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "sparserl-sandbox-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw error(std::string("sandbox: mkdtemp failed: ") + std::strerror(errno));
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Feeds stdin, collects stdout/stderr, and watches the deadline and the child's exit.
void exchange(pid_t pid, const std::vector<char>& input, fd_holder& in, fd_holder& out,
              fd_holder& err, clock_type::time_point deadline, const sandbox_options& o,
              sandbox_result& r) {
  size_t sent = 0;
  if (input.empty()) in.reset();
  if (in.get() >= 0) set_nonblocking(in.get());
  set_nonblocking(out.get());
  set_nonblocking(err.get());
  bool exited = false;
  auto drain_deadline = deadline;
  const auto stall = std::chrono::duration_cast<clock_type::duration>(
      std::chrono::duration<double>(o.stall_timeout_s));
  auto stall_deadline = clock_type::time_point::max();  // armed by the first stdout bytes
  while (in.get() >= 0 || out.get() >= 0 || err.get() >= 0) {
    const auto now = clock_type::now();
    if (now >= drain_deadline || (!exited && now >= stall_deadline)) {
      if (!exited) r.timed_out = true;
      if (!exited && now >= stall_deadline && now < drain_deadline) r.stalled = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd fds[3] = {{out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}, {in.get(), POLLOUT, 0}};
    const int n = ::poll(
        fds, 3, ms_until(exited ? drain_deadline : std::min(drain_deadline, stall_deadline), 50));
    if (n < 0 && errno != EINTR)
      throw error(std::string("sandbox: poll failed: ") + std::strerror(errno));
    if (fds[0].revents && !drain(out.get(), r.out, o.max_stdout_bytes, r.out_truncated))
      out.reset();
    if (o.stall_timeout_s > 0 && (fds[0].revents & POLLIN))  // it reported: the next step's clock
      stall_deadline = clock_type::now() + stall;
    if (fds[1].revents && !drain(err.get(), r.err, o.max_stderr_bytes, r.err_truncated))
      err.reset();
    if (in.get() >= 0 && fds[2].revents) {
      // MSG_NOSIGNAL: a child that stopped reading is its problem, not a SIGPIPE for us.
      const ssize_t w =
          ::send(in.get(), input.data() + sent, input.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0) sent += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ||
          sent == input.size())
        in.reset();  // end of file for the child
    }
    if (!exited && has_exited(pid)) {
      // Whatever else of its group still holds the pipes goes now; then drain briefly.
      exited = true;
      ::kill(-pid, SIGKILL);
      drain_deadline = std::min(deadline, clock_type::now() + std::chrono::seconds(1));
    }
  }
  while (!exited && !has_exited(pid)) {  // the pipes closed; the process may still run
    if (clock_type::now() >= deadline) {
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::string seconds_text(double s) {
  char buf[32];
  if (std::fabs(s - std::round(s)) < 1e-9)
    std::snprintf(buf, sizeof(buf), "%.0f", s);
  else
    std::snprintf(buf, sizeof(buf), "%.3g", s);
  return buf;
}

}  // namespace

bool sandbox_can_drop_privileges() { return nobody_identity().drop; }

std::string sandbox_result::describe(double timeout_s) const {
  if (!started) return failure;
  if (timed_out) return "timeout after " + seconds_text(timeout_s) + " s";
  if (signal == SIGXCPU) return "CPU time limit exceeded (SIGXCPU)";
  if (signal > 0)
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with status " + std::to_string(exit_code);
}

sandbox_result run_sandboxed(const std::vector<std::string>& argv, const std::vector<char>& input,
                             const sandbox_options& o) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/')
    throw error("sandbox: argv[0] must be an absolute path");
  const auto start = clock_type::now();
  const auto deadline =
      start + std::chrono::duration_cast<clock_type::duration>(
                  std::chrono::duration<double>(std::max(0.001, o.wall_timeout_s)));
  sandbox_result r;
  const identity id = o.drop_privileges ? nobody_identity() : identity{};
  if (o.drop_privileges && !id.drop)
    r.notes.push_back(::geteuid() == 0 ? "privileges not dropped: no user nobody"
                                       : "privileges not dropped: not running as root");
  std::optional<temp_dir> fresh;
  std::string work_dir = o.work_dir;
  if (work_dir.empty()) {
    fresh.emplace();
    work_dir = fresh->path();
  }
  if (o.writable_work_dir && id.drop && ::chown(work_dir.c_str(), id.uid, id.gid) != 0)
    throw error("sandbox: cannot hand " + work_dir + " to nobody: " + std::strerror(errno));

  std::vector<std::string> args = argv, env = o.env;
  std::vector<char*> c_args = c_strings(args), c_env = c_strings(env);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw error(std::string("sandbox: socketpair failed: ") + std::strerror(errno));
  fd_holder in_parent(sv[0]), in_child(sv[1]);
  pipe_pair out, err, status;

  const double cpu = o.cpu_time_s > 0 ? o.cpu_time_s : o.wall_timeout_s + 1;
  child_plan plan{c_args.data(),
                  c_env.data(),
                  work_dir.c_str(),
                  in_child.get(),
                  out.write.get(),
                  err.write.get(),
                  status.write.get(),
                  limit_of(static_cast<uint64_t>(std::ceil(cpu))),
                  limit_of(static_cast<uint64_t>(std::max<int64_t>(0, o.address_space_bytes))),
                  limit_of(static_cast<uint64_t>(std::max<int64_t>(0, o.file_size_bytes))),
                  limit_of(static_cast<uint64_t>(std::max<int64_t>(3, o.open_files))),
                  limit_of(static_cast<uint64_t>(std::max<int64_t>(0, o.processes))),
                  o.address_space_bytes > 0,
                  o.processes >= 0,
                  o.isolate_network,
                  id};
  if (o.processes >= 0 && ::geteuid() == 0 && !id.drop)
    r.notes.push_back("process limit not enforced: root ignores RLIMIT_NPROC");
  const pid_t pid = ::fork();
  if (pid < 0) throw error(std::string("sandbox: fork failed: ") + std::strerror(errno));
  if (pid == 0) child_setup_and_exec(plan);
  ::setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
  in_child.reset();
  out.write.reset();
  err.write.reset();
  status.write.reset();

  try {
    read_status(status.read.get(), deadline, r);
    if (r.started) exchange(pid, input, in_parent, out.read, err.read, deadline, o, r);
  } catch (...) {  // our own failure (poll, fcntl): still no orphan, no zombie
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw;
  }
  ::kill(-pid, SIGKILL);  // the group: the child if it still runs, anything it left behind
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus)) r.exit_code = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) r.signal = WTERMSIG(wstatus);
  r.wall_s = std::chrono::duration<double>(clock_type::now() - start).count();
  return r;
}

}  // namespace sparserl
