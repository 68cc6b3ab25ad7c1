#pragma once
// A sandboxed child process spoken to with eval/wire.h frames over one socket (the child's stdin
// and stdout), its stderr captured into a bounded log. Every wait has a deadline, so a child that
// hangs, dies or lies costs the caller a timeout or an error, never a hang or a SIGPIPE.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace sparserl {

class worker_process {
 public:
  using clock = std::chrono::steady_clock;
  enum class io_status { ok, timeout, closed, invalid };  // invalid: a frame over max_bytes

  // Starts argv[0] (a path) with `extra_env` ("KEY=VALUE") added to this process's environment.
  // Throws sparserl::error when the program cannot be started.
  worker_process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                 int64_t max_log_bytes = 64 * 1024);
  ~worker_process();  // SIGKILL and reap
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  pid_t pid() const { return pid_; }

  // One whole frame each way. closed: the peer went away.
  io_status send(const std::vector<char>& payload, clock::time_point deadline);
  io_status receive(std::vector<char>& payload, clock::time_point deadline,
                    uint64_t max_bytes = uint64_t{16} << 30);

  // Stderr captured so far (drained without blocking), then cleared. Bounded by max_log_bytes.
  std::string take_log();

  // Waits up to `grace` for the child to exit by itself, then SIGKILLs it; reaps it and says how it
  // ended: "exit status 3", "signal 11 (Segmentation fault)", or killed_after_grace when a
  // positive grace ran out (its own status is then unknown).
  std::string stop(std::chrono::milliseconds grace = std::chrono::milliseconds(0));
  static constexpr const char* killed_after_grace = "still running after the grace period, killed";
  bool running() const { return pid_ > 0; }

 private:
  bool wait_ready(short events, clock::time_point deadline);  // false on timeout
  void drain_log();
  io_status read_exact(char* p, size_t n, clock::time_point deadline);

  pid_t pid_ = -1;
  int socket_ = -1;  // our end; the child has the other as fd 0 and 1
  int log_fd_ = -1;  // read end of the child's stderr
  int64_t max_log_bytes_;
  std::string log_;
  int64_t log_dropped_ = 0;
};

// "exited with status 3" / "killed by signal 11 (Segmentation fault)" for a waitpid status.
std::string describe_exit(int wait_status);

}  // namespace sparserl
