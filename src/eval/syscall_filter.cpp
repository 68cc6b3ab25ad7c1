#include "eval/syscall_filter.h"

#include <seccomp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace sparserl {

namespace {

// Verdict texts for every call number, made before the filter is installed: the handler cannot
// allocate (brk and mmap are forbidden) and libseccomp's resolver allocates.
constexpr int max_syscall = 1024;
std::array<char[64], max_syscall> verdicts;
forbidden_call_reporter reporter = nullptr;

void make_verdicts() {
  for (int nr = 0; nr < max_syscall; ++nr) {
    char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    if (name)
      std::snprintf(verdicts[nr], sizeof verdicts[nr], "%s%s", forbidden_call_prefix, name);
    else
      std::snprintf(verdicts[nr], sizeof verdicts[nr], "%s#%d", forbidden_call_prefix, nr);
    std::free(name);
  }
}

void on_sigsys(int, siginfo_t* info, void*) {
  const int nr = info->si_syscall;
  const char* unknown = "sandbox: forbidden system call (number out of range)";
  const char* text = nr >= 0 && nr < max_syscall ? verdicts[nr] : unknown;
  if (reporter) reporter(text);
  // No reporter, or it returned: say it on stderr, then make the same call again. SA_RESETHAND
  // left SIGSYS at its default, so the kernel's trap now ends the process with SIGSYS.
  const size_t n = std::strlen(text);
  if (::write(2, text, n) > 0) (void)!::write(2, "\n", 1);
  ::syscall(nr);
  for (;;) ::syscall(SYS_exit_group, 159);  // unreachable unless the call was allowed after all
}

}  // namespace

std::string install_syscall_filter(const std::vector<allowed_call>& allowed,
                                   forbidden_call_reporter report, unlisted_call unlisted,
                                   const std::vector<std::string>& always_end) {
  make_verdicts();
  reporter = report;
  struct sigaction sa {};
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;  // ONSTACK: used where one is set
  sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGSYS, &sa, nullptr) != 0)
    return std::string("sigaction(SIGSYS): ") + std::strerror(errno);
  std::unique_ptr<void, decltype(&seccomp_release)> ctx(
      seccomp_init(unlisted == unlisted_call::fail ? SCMP_ACT_ERRNO(EPERM) : SCMP_ACT_TRAP),
      seccomp_release);
  if (!ctx) return "seccomp_init failed";
  std::vector<allowed_call> calls = allowed;
  calls.emplace_back("rt_sigreturn");
  for (const allowed_call& c : calls) {
    const int nr = seccomp_syscall_resolve_name(c.name.c_str());
    if (nr == __NR_SCMP_ERROR) return "unknown system call '" + c.name + "'";
    const int rc = c.arg < 0 ? seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, nr, 0)
                             : seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, nr, 1,
                                                SCMP_CMP(static_cast<unsigned>(c.arg),
                                                         SCMP_CMP_MASKED_EQ, c.mask, c.value));
    if (rc < 0) return "seccomp_rule_add(" + c.name + "): " + std::strerror(-rc);
  }
  for (const std::string& name : always_end) {
    const int nr = seccomp_syscall_resolve_name(name.c_str());
    if (nr == __NR_SCMP_ERROR) return "unknown system call '" + name + "'";
    const int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_TRAP, nr, 0);
    if (rc < 0) return "seccomp_rule_add(" + name + "): " + std::strerror(-rc);
  }
  const int rc = seccomp_load(ctx.get());
  if (rc < 0) return std::string("seccomp_load: ") + std::strerror(-rc);
  return "";
}

std::string forbidden_call_verdict(int nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  std::string out = forbidden_call_prefix + (name ? std::string(name) : "#" + std::to_string(nr));
  std::free(name);
  return out;
}

}  // namespace sparserl
