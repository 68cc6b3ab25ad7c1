#pragma once
// One-shot sandboxed child processes for code we do not trust (the CPU emulator child, the
// compiler run on model-written source). The child is fork+exec'd with: its own process group, a
// fresh empty working directory, a cleared environment, no inherited descriptors beyond
// stdin/stdout/stderr, resource limits (CPU, address space, file size, open files, no core dumps,
// no fork once unprivileged), a new network namespace when the kernel permits (no network), and,
// when started as root, the uid/gid of `nobody` with no_new_privs. A wall-clock deadline SIGKILLs
// the whole process group. The child is always reaped and every descriptor and temporary
// directory released. What it does not do is in docs/security.md.
#include <cstdint>
#include <string>
#include <vector>

namespace sparserl {

struct sandbox_options {
  double wall_timeout_s = 10;
  // > 0: once the child has written to stdout, it is killed (timed_out, stalled) when it then
  // writes nothing for this long: a per-step deadline for children that report as they go.
  double stall_timeout_s = 0;
  double cpu_time_s = 0;                           // RLIMIT_CPU; 0: the wall timeout + 1 s
  int64_t address_space_bytes = int64_t{4} << 30;  // RLIMIT_AS; 0: not limited
  int64_t file_size_bytes = 0;                     // RLIMIT_FSIZE: the largest file it may write
  int64_t open_files = 16;                         // RLIMIT_NOFILE
  int64_t processes = 0;  // RLIMIT_NPROC, applied after dropping to nobody; 0: cannot fork,
                          // < 0: not limited (a compiler needs a few)
  bool isolate_network = true;
  bool drop_privileges = true;                   // to nobody when running as root
  std::string work_dir;                          // "": a fresh empty directory, removed afterwards
  bool writable_work_dir = false;                // hand work_dir to the sandbox user (root only)
  std::vector<std::string> env;                  // the child's entire environment ("KEY=VALUE")
  int64_t max_stdout_bytes = int64_t{64} << 20;  // beyond: read and dropped (out_truncated)
  int64_t max_stderr_bytes = 64 * 1024;
};

struct sandbox_result {
  bool started = false;  // false: argv[0] never ran; `failure` says why
  std::string failure;
  bool timed_out = false;
  bool stalled = false;   // timed out by stall_timeout_s (timed_out is set too)
  int exit_code = -1;     // >= 0 when it exited
  int signal = 0;         // > 0 when a signal ended it
  std::vector<char> out;  // stdout
  std::string err;        // stderr
  bool out_truncated = false, err_truncated = false;
  double wall_s = 0;
  std::vector<std::string> notes;  // protections that could not be applied, e.g.
                                   // "network not isolated: unshare: Operation not permitted"
  // "exited with status 3", "killed by signal 11 (SIGSEGV)", "timeout after 5 s", ...
  std::string describe(double timeout_s) const;
};

// Runs argv (argv[0] an absolute path) with `input` as its stdin. Throws sparserl::error only for
// failures of this process (no descriptors, fork failed); a child that cannot start, crashes or
// hangs is reported in the result.
sandbox_result run_sandboxed(const std::vector<std::string>& argv, const std::vector<char>& input,
                             const sandbox_options& options);

// Whether run_sandboxed can switch to nobody here (running as root and nobody exists).
bool sandbox_can_drop_privileges();

}  // namespace sparserl
