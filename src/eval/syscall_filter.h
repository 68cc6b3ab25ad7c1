#pragma once
// A seccomp allow-list (libseccomp) for the sandboxed children (the CPU emulator's child, the NVRTC
// child), installed after their set-up and before untrusted work, on top of the sandbox's fork,
// rlimits and network namespace. A call outside the list never runs: the kernel raises SIGSYS
// (SECCOMP_RET_TRAP), whose handler names the call ("sandbox: forbidden system call openat") and
// the process ends. The handler is one-shot (SA_RESETHAND), so if device code replaced or blocked
// it, the kernel's forced SIGSYS kills the process anyway (the parent then sees SIGSYS).
#include <cstdint>
#include <string>
#include <vector>

namespace sparserl {

// Called from the SIGSYS handler with the whole verdict text ("sandbox: forbidden system call
// <name>"). It runs on a signal stack with only the allowed calls left: it may write and exit,
// nothing else. If it returns, the text goes to stderr and the process dies of SIGSYS.
using forbidden_call_reporter = void (*)(const char* verdict);

// One allowed system call, by name as libseccomp spells it ("read", "exit_group"), with any
// arguments, or only where (argument `arg` & mask) == value (e.g. openat read-only).
struct allowed_call {
  allowed_call(const char* call) : name(call) {}  // NOLINT: a bare name reads best in lists
  allowed_call(const char* call, int argument, uint64_t bits, uint64_t equal)
      : name(call), arg(argument), mask(bits), value(equal) {}
  std::string name;
  int arg = -1;  // -1: any arguments
  uint64_t mask = 0, value = 0;
};

// What a call outside the allow-list does. Either way it never runs. `end_process` (the emulator's
// child, which runs untrusted device code): SIGSYS names it and the process ends. `fail` (the
// NVRTC child, which runs only NVRTC on untrusted text): it returns EPERM, so an optional call of a
// library (the CUDA driver's eventfd2 and threads where a driver is installed) fails as on a
// machine without it, and the compile goes on; the calls in `always_end` still end the process.
enum class unlisted_call { end_process, fail };

// Allows exactly `allowed`, plus rt_sigreturn (to leave a signal handler). Returns "" on success,
// else why the filter is not installed (the kernel lacks seccomp, an unknown name, ...): the
// caller decides whether that is fatal. Sets no_new_privs. Covers the calling thread only (the
// children are single-threaded when they install it).
std::string install_syscall_filter(const std::vector<allowed_call>& allowed,
                                   forbidden_call_reporter report = nullptr,
                                   unlisted_call unlisted = unlisted_call::end_process,
                                   const std::vector<std::string>& always_end = {});

// Every verdict starts with this: a parent finds the child's verdict in its stderr by it.
inline constexpr const char* forbidden_call_prefix = "sandbox: forbidden system call ";

// The verdict text for system call `nr` of this architecture ("sandbox: forbidden system call
// openat").
std::string forbidden_call_verdict(int nr);

}  // namespace sparserl
