#include "eval/compiler.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <future>

#include "eval/nvrtc_reply.h"
#include "eval/syscall_filter.h"
#include "eval/wire.h"

namespace sparserl {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

std::string cut_log(std::string log, int64_t max_bytes) {
  const size_t limit = max_bytes < 0 ? 0 : static_cast<size_t>(max_bytes);
  if (log.size() <= limit) return log;
  const size_t dropped = log.size() - limit;
  log.resize(limit);
  return log + "\n[log truncated: " + std::to_string(dropped) + " more bytes]";
}

// The first "error" line of an NVRTC log, for the one-line summary.
std::string first_error_line(const std::string& log) {
  size_t begin = 0;
  while (begin < log.size()) {
    size_t end = log.find('\n', begin);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(begin, end - begin);
    if (line.find("error") != std::string::npos) return line.substr(0, 300);
    begin = end + 1;
  }
  return "";
}

// ---- the child
// ------------------------------------------------------------------------------------

using child_status = nvrtc_child_status;

void close_other_fds(int keep_max) {
  if (::syscall(SYS_close_range, static_cast<unsigned>(keep_max + 1), ~0U, 0) == 0) return;
  for (int fd = keep_max + 1; fd < 4096; ++fd) ::close(fd);
}

// Runs in the forked child, which only execs: a fork of a multi-threaded process may call
// nothing that takes a lock (malloc, locales, the loader) until exec. argv and envp are built
// before the fork. fd 0 = the source, 2 = the capture file, 3 = the result pipe.
[[noreturn]] void child_exec(int source_fd, int result_fd, int stderr_fd, pid_t parent,
                             const char* path, char* const* argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(3);
  const int out = ::fcntl(result_fd, F_DUPFD, 10);
  const int err = ::fcntl(stderr_fd, F_DUPFD, 10);
  const int in = ::fcntl(source_fd, F_DUPFD, 10);
  if (out < 0 || err < 0 || in < 0 || ::dup2(in, 0) < 0 || ::dup2(err, 2) < 0 || ::dup2(out, 3) < 0)
    ::_exit(4);
  close_other_fds(3);
  ::execv(path, argv);
  ::_exit(5);
}

// ---- the parent
// -----------------------------------------------------------------------------------

// Reads one wire frame from fd until `deadline`; returns false when the time ran out first.
// `eof` is set when the pipe closed before a full frame.
bool read_frame(int fd, clock_type::time_point deadline, std::vector<char>& frame, bool& eof) {
  std::vector<char> buffer;
  eof = false;
  char chunk[65536];
  while (true) {
    if (buffer.size() >= sizeof(uint64_t)) {
      uint64_t n = 0;
      std::memcpy(&n, buffer.data(), sizeof(n));
      if (n > (uint64_t{1} << 32)) {  // no CUBIN is 4 GiB: a broken child
        eof = true;
        return true;
      }
      if (buffer.size() - sizeof(n) >= n) {
        frame.assign(buffer.begin() + sizeof(n), buffer.begin() + sizeof(n) + n);
        return true;
      }
    }
    const double left_ms =
        std::chrono::duration<double, std::milli>(deadline - clock_type::now()).count();
    if (left_ms <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min(left_ms, 1000.0)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) {
      eof = true;
      return true;
    }
    buffer.insert(buffer.end(), chunk, chunk + got);
  }
}

std::string read_capture(int fd, int64_t max_bytes) {
  std::string out;
  if (::lseek(fd, 0, SEEK_SET) != 0) return out;
  char chunk[4096];
  while (static_cast<int64_t>(out.size()) < max_bytes) {
    const ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got <= 0) break;
    out.append(chunk, static_cast<size_t>(got));
  }
  return out;
}

std::string signal_text(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  }
  return "exit code " + std::to_string(WEXITSTATUS(status));
}

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

void decode_reply(const std::vector<char>& frame, const compile_options& options,
                  compile_result& r) {
  wire::reader in(frame);
  const auto status = static_cast<child_status>(in.get<uint8_t>());
  const std::string message = in.get_string();
  r.log = cut_log(in.get_string(), options.max_log_bytes);
  r.cubin = in.get_vector<char>();
  switch (status) {
    case child_status::ok:
      r.ok = true;
      break;
    case child_status::source_error: {
      if (r.log.find("out of memory") != std::string::npos) {  // EDG's own allocation failure
        r.out_of_memory = true;
        r.error = "compile exceeded memory limit (" + mib(options.memory_bytes) + ")";
        break;
      }
      r.source_error = true;
      const std::string first = first_error_line(r.log);
      r.error = "compile error" + (first.empty() ? std::string() : ": " + first);
      break;
    }
    case child_status::out_of_memory:
      r.out_of_memory = true;
      r.error = "compile exceeded memory limit (" + mib(options.memory_bytes) + ")";
      break;
    case child_status::nvrtc_failure:
      r.error = "NVRTC failed: " + message;
      break;
  }
  if (!r.ok) r.cubin.clear();
}

// A child that left no reply: memory (LLVM aborts on a failed allocation) or a crash.
void describe_death(int status, const std::string& captured, const compile_options& options,
                    compile_result& r) {
  const bool memory = captured.find("out of memory") != std::string::npos ||
                      captured.find("bad_alloc") != std::string::npos ||
                      captured.find("Cannot allocate memory") != std::string::npos;
  if (memory) {
    r.out_of_memory = true;
    r.error = "compile exceeded memory limit (" + mib(options.memory_bytes) + ")";
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
    r.timed_out = true;
    r.error = "compile timed out after " + seconds_text(options.timeout_s) + " s of CPU time";
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
    // The child's seccomp filter: its SIGSYS handler wrote the verdict (with the call's name) to
    // stderr before the process died of SIGSYS.
    const size_t at = captured.rfind(forbidden_call_prefix);
    r.error = at == std::string::npos ? std::string("sandbox: forbidden system call (SIGSYS)")
                                      : captured.substr(at, captured.find('\n', at) - at);
  } else {
    r.error = "compile process died (" + signal_text(status) + ")";
  }
  r.log = cut_log(captured, options.max_log_bytes);
}

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// sparserl-nvrtc-child: $SPARSERL_NVRTC_CHILD (an installed copy: the Python package sets it),
// else beside the running executable, else the build tree's.
std::string nvrtc_child_path() {
  if (const char* set = std::getenv("SPARSERL_NVRTC_CHILD"); set && *set) return set;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/') + 1);
    if (::access((dir + "sparserl-nvrtc-child").c_str(), X_OK) == 0)
      return dir + "sparserl-nvrtc-child";
  }
  return SPARSERL_NVRTC_CHILD;
}

struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string default_cuda_include_dir() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* root = std::getenv(var);
    if (!root || !*root) continue;
    const std::string dir = std::string(root) + "/include";
    struct stat st {};
    if (::stat((dir + "/cuda_fp16.h").c_str(), &st) == 0) return dir;
  }
  struct stat st {};
  if (::stat("/usr/local/cuda/include/cuda_fp16.h", &st) == 0) return "/usr/local/cuda/include";
  return "";
}

std::vector<std::string> nvrtc_flags(const compile_options& options) {
  std::vector<std::string> flags = {"--gpu-architecture=" + options.arch, "-default-device",
                                    "--std=c++17"};
  if (options.lineinfo) flags.emplace_back("-lineinfo");
  for (const std::string& dir : options.include_dirs)
    if (!dir.empty()) flags.push_back("--include-path=" + dir);
  return flags;
}

compile_result compile_device_source(const std::string& source, const compile_options& options) {
  const auto start = clock_type::now();
  compile_result r;
  try {
    if (source.find('\0') != std::string::npos) {
      r.source_error = true;
      r.error = "compile error: the source contains a NUL byte";
      return r;
    }
    const std::vector<std::string> flags = nvrtc_flags(options);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
      r.error = std::string("compile: pipe failed: ") + std::strerror(errno);
      return r;
    }
    fd_guard read_end{pipe_fds[0]}, write_end{pipe_fds[1]};
    fd_guard capture{::memfd_create("sparserl-nvrtc-stderr", MFD_CLOEXEC)};
    if (capture.fd < 0) {
      r.error = std::string("compile: memfd_create failed: ") + std::strerror(errno);
      return r;
    }
    fd_guard source_file{::memfd_create("sparserl-nvrtc-source", MFD_CLOEXEC)};
    if (source_file.fd < 0 || !write_all(source_file.fd, source) ||
        ::lseek(source_file.fd, 0, SEEK_SET) != 0) {
      r.error = std::string("compile: cannot stage the source: ") + std::strerror(errno);
      return r;
    }
    const std::string child = nvrtc_child_path();
    if (::access(child.c_str(), X_OK) != 0) {
      r.error = "compile: cannot run " + child + ": " + std::strerror(errno);
      return r;
    }
    std::vector<std::string> args = {
        child, std::to_string(options.memory_bytes),
        std::to_string(static_cast<int64_t>(std::ceil(std::max(1.0, options.timeout_s))))};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      r.error = std::string("compile: fork failed: ") + std::strerror(errno);
      return r;
    }
    if (pid == 0)
      child_exec(source_file.fd, write_end.fd, capture.fd, parent, child.c_str(), argv.data());
    ::close(write_end.fd);
    write_end.fd = -1;

    // Wall clock only as a backstop (a child that is not scheduled or is stuck off the CPU).
    const double wall_s = compile_wall_limit_s(options);
    const auto deadline = start + std::chrono::duration_cast<clock_type::duration>(
                                      std::chrono::duration<double>(wall_s));
    std::vector<char> frame;
    bool eof = false;
    const bool in_time = read_frame(read_end.fd, deadline, frame, eof);
    if (!in_time) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!in_time) {
      r.timed_out = true;
      r.error = "compile timed out after " + seconds_text(wall_s) + " s of wall time (limit " +
                seconds_text(options.timeout_s) + " s of CPU time)";
    } else if (!eof) {
      decode_reply(frame, options, r);
    } else {
      describe_death(status, read_capture(capture.fd, options.max_log_bytes), options, r);
    }
  } catch (const std::exception& e) {
    r = compile_result{};
    r.error = std::string("compile: ") + e.what();
  }
  r.ms = ms_since(start);
  return r;
}

// ---- the cache
// ------------------------------------------------------------------------------------

struct compile_cache::entry {
  std::shared_future<std::shared_ptr<const compile_result>> result;
  lru_list::iterator position;
  bool ready = false;
  int64_t bytes = 0;
};

namespace {

std::string cache_key(const std::string& source, const compile_options& options) {
  std::string key;
  for (const std::string& f : nvrtc_flags(options)) key += f + '\n';
  key += "log=" + std::to_string(options.max_log_bytes) + '\n';
  key += '\0';
  key += source;
  return key;
}

bool cacheable(const compile_result& r) { return r.ok || r.source_error; }

}  // namespace

compile_cache::compile_cache(size_t max_entries, int64_t max_bytes, compile_fn compile)
    : max_entries_(max_entries), max_bytes_(max_bytes), compile_(std::move(compile)) {}

std::shared_ptr<const compile_result> compile_cache::compile(const std::string& source,
                                                             const compile_options& options) {
  const std::string key = cache_key(source, options);
  std::promise<std::shared_ptr<const compile_result>> promise;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      ++stats_.hits;
      std::shared_ptr<entry> e = it->second;
      if (e->ready) lru_.splice(lru_.begin(), lru_, e->position);
      lock.unlock();
      return e->result.get();  // waits when another thread is compiling it
    }
    ++stats_.misses;
    ++stats_.compiles;
    auto e = std::make_shared<entry>();
    e->result = promise.get_future().share();
    lru_.push_front(key);
    e->position = lru_.begin();
    entries_[key] = e;
  }
  std::shared_ptr<const compile_result> result;
  try {
    result = std::make_shared<const compile_result>(compile_(source, options));
  } catch (const std::exception& ex) {
    compile_result failed;
    failed.error = std::string("compile: ") + ex.what();
    result = std::make_shared<const compile_result>(std::move(failed));
  }
  promise.set_value(result);
  insert(key, result);
  return result;
}

void compile_cache::insert(const std::string& key, std::shared_ptr<const compile_result> result) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;  // cleared meanwhile
  std::shared_ptr<entry> e = it->second;
  if (!cacheable(*result)) {
    lru_.erase(e->position);
    entries_.erase(it);
    return;
  }
  e->ready = true;
  e->bytes = static_cast<int64_t>(key.size() + result->cubin.size() + result->log.size() +
                                  result->error.size());
  stats_.bytes += e->bytes;
  // Evict from the cold end; entries still compiling are skipped (their owner finishes them).
  auto victim = lru_.end();
  while ((entries_.size() > max_entries_ || stats_.bytes > max_bytes_) && victim != lru_.begin()) {
    --victim;
    auto found = entries_.find(*victim);
    if (found == entries_.end() || !found->second->ready || *victim == key) continue;
    stats_.bytes -= found->second->bytes;
    entries_.erase(found);
    victim = lru_.erase(victim);
  }
}

compile_cache::stats compile_cache::statistics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  stats s = stats_;
  s.entries = 0;
  for (const auto& [key, e] : entries_)
    if (e->ready) ++s.entries;
  return s;
}

void compile_cache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second->ready) {
      lru_.erase(it->second->position);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  stats_.bytes = 0;
}

}  // namespace sparserl
