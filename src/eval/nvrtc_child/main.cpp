// sparserl-nvrtc-child MEMORY_BYTES CPU_SECONDS FLAG...: compiles the CUDA source on stdin with
// NVRTC under its own limits and writes its reply (eval/nvrtc_reply.h) to fd 3. Started only by
// eval/compiler.cpp, with fd 2 a capture file (LLVM reports "out of memory" there).
//
// NVRTC is trusted code on untrusted source; in case the source exploits it, the compile runs
// under a seccomp allow-list (eval/syscall_filter.h) installed once the source is read, the limits
// set and the libraries NVRTC loads lazily are loaded: reading files (headers) and memory, yes;
// writing files, starting processes or threads, the network, signals to others: no. A forbidden
// call ends the child with SIGSYS and "sandbox: forbidden system call <name>" on stderr.
#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "eval/nvrtc_reply.h"
#include "eval/syscall_filter.h"
#include "eval/wire.h"

namespace {

using child_status = sparserl::nvrtc_child_status;

struct child_reply {
  child_status status = child_status::nvrtc_failure;
  std::string message;  // NVRTC's result string
  std::string log;
  std::vector<char> cubin;
};

child_reply run_nvrtc(const std::string& source, const std::vector<std::string>& flags) {
  child_reply reply;
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = nvrtcCreateProgram(&prog, source.c_str(), "program.cu", 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) {
    reply.status =
        rc == NVRTC_ERROR_OUT_OF_MEMORY ? child_status::out_of_memory : child_status::nvrtc_failure;
    reply.message = nvrtcGetErrorString(rc);
    return reply;
  }
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());
  rc = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    reply.log.resize(log_size);
    if (nvrtcGetProgramLog(prog, reply.log.data()) != NVRTC_SUCCESS) reply.log.clear();
    while (!reply.log.empty() && reply.log.back() == '\0') reply.log.pop_back();
  }
  reply.message = nvrtcGetErrorString(rc);
  if (rc == NVRTC_SUCCESS) {
    size_t n = 0;
    if (nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
      reply.cubin.resize(n);
      if (nvrtcGetCUBIN(prog, reply.cubin.data()) == NVRTC_SUCCESS) reply.status = child_status::ok;
    }
    if (reply.status != child_status::ok) reply.message = "NVRTC produced no CUBIN";
  } else if (rc == NVRTC_ERROR_COMPILATION) {
    reply.status = child_status::source_error;
  } else if (rc == NVRTC_ERROR_OUT_OF_MEMORY) {
    reply.status = child_status::out_of_memory;
  }
  nvrtcDestroyProgram(&prog);
  return reply;
}

int64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// The limits: address space on top of what this process maps at start (NVRTC's library
// included); CPU time, so that a busy machine cannot fail a legitimate compile (SIGXCPU at the
// limit, SIGKILL a second later); no core dumps.
void set_limits(int64_t memory_bytes, int64_t cpu_seconds) {
  rlimit as{};
  as.rlim_cur = as.rlim_max = static_cast<rlim_t>(address_space_bytes() + memory_bytes);
  ::setrlimit(RLIMIT_AS, &as);
  rlimit core{};
  ::setrlimit(RLIMIT_CORE, &core);
  rlimit cpu{};
  cpu.rlim_cur = static_cast<rlim_t>(std::max<int64_t>(1, cpu_seconds));
  cpu.rlim_max = cpu.rlim_cur + 1;
  ::setrlimit(RLIMIT_CPU, &cpu);
}

// NVRTC dlopens its builtins and (where present) the driver during the first compile; loading
// them here, before the filter, keeps their initialisers' system calls out of the allow-list and
// leaves NVRTC's own dlopen a lookup of an already loaded object.
void preload_libraries() {
  for (const char* name : {"libnvrtc-builtins.so." SPARSERL_CUDA_MAJOR_MINOR, "libcuda.so.1"})
    ::dlopen(name, RTLD_NOW | RTLD_GLOBAL);  // absent (no driver on a CPU machine) is fine
}

void enter_sandbox() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Sanitizer runtimes need calls the list leaves out (symbolizer processes, /proc writes).
  // (scripts/sanitize.sh builds this child without sanitizers, so there the filter is on.)
#else
  constexpr uint64_t write_flags = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND;
  // clang-format off
  const std::vector<sparserl::allowed_call> allowed = {
      // files, read-only: headers, NVRTC's own libraries
      {"openat", 2, write_flags, 0}, {"open", 1, write_flags, 0}, "read", "pread64", "readv",
      "lseek", "close", "fstat", "newfstatat", "stat", "lstat", "statx", "access", "faccessat",
      "faccessat2", "readlink", "readlinkat", "getcwd", "getdents64", "fcntl",
      {"ioctl", 1, 0xffffffff, TCGETS},  // isatty
      // the reply (fd 3) and the log (fd 2)
      "write", "writev",
      // memory
      "brk", "mmap", "munmap", "mremap", "mprotect", "madvise",
      // this process's own state, time, exit
      "futex", "gettid", "getpid", "rt_sigaction", "rt_sigprocmask", "sigaltstack",
      "clock_gettime", "clock_getres", "gettimeofday", "time", "nanosleep", "clock_nanosleep",
      "sched_yield", "sched_getaffinity", "sched_get_priority_min", "sched_get_priority_max",
      "getrandom", "sysinfo", "uname", "prlimit64", "getrlimit", "getrusage", "exit",
      "exit_group",
      // abort() (LLVM on a failed allocation) signals this process only
      {"tgkill", 0, 0xffffffff, static_cast<uint64_t>(::getpid())}};
  // clang-format on
  // Whatever else is called fails with EPERM (the driver's optional calls, seen on the H200:
  // eventfd2), except these, which only an exploited compiler would make: they end the child.
  const std::vector<std::string> always_end = {"execve",
                                               "execveat",
                                               "fork",
                                               "vfork",
                                               "socket",
                                               "socketpair",
                                               "connect",
                                               "bind",
                                               "ptrace",
                                               "process_vm_readv",
                                               "process_vm_writev",
                                               "kill",
                                               "unlink",
                                               "unlinkat",
                                               "rename",
                                               "renameat",
                                               "renameat2"};
  const std::string failure =
      sparserl::install_syscall_filter(allowed, nullptr, sparserl::unlisted_call::fail, always_end);
  if (!failure.empty())
    std::fprintf(stderr, "seccomp filter not installed (%s): compiling without it\n",
                 failure.c_str());
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string source(std::istreambuf_iterator<char>(std::cin), {});
  const std::vector<std::string> flags(argv + 3, argv + argc);
  set_limits(std::strtoll(argv[1], nullptr, 10), std::strtoll(argv[2], nullptr, 10));
  preload_libraries();
  enter_sandbox();
  // Test hook (tests/eval/test_compiler.cpp): a call the filter forbids, as an exploited compiler
  // would make, to check that it ends the child and the compiler names it. getenv makes no call.
  // (socket: in always_end.)
  if (std::getenv("SPARSERL_NVRTC_CHILD_TEST_FORBIDDEN_CALL")) ::syscall(SYS_socket, 2, 1, 0);
  child_reply reply;
  try {
    reply = run_nvrtc(source, flags);
  } catch (const std::bad_alloc&) {
    reply.status = child_status::out_of_memory;
    reply.message = "std::bad_alloc";
  } catch (...) {
    reply.status = child_status::nvrtc_failure;
    reply.message = "exception in NVRTC";
  }
  try {
    sparserl::wire::writer w;
    w.put(static_cast<uint8_t>(reply.status));
    w.put_string(reply.message);
    w.put_string(reply.log);
    w.put_vector(reply.cubin);
    sparserl::wire::write_message(3, w.bytes());
  } catch (...) {
    return 4;
  }
  return 0;
}
