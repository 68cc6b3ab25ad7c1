// LD_PRELOAD=segv_trace.so PROGRAM: on SIGSEGV prints a raw backtrace (addresses with their
// module) and the faulting address to stderr, for machines without gdb. Build:
//   gcc -shared -fPIC -O1 -o segv_trace.so tools/debug/segv_trace.c
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig, siginfo_t* info, void* context) {
  // A call through a null pointer leaves pc = 0, which backtrace() cannot unwind from; the
  // return address the call pushed is at the stack pointer, so report that frame too.
  const ucontext_t* uc = (const ucontext_t*)context;
  void* caller = *(void**)(uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
  Dl_info dc;
  if (dladdr(caller, &dc) && dc.dli_fname)
    fprintf(stderr, "segv_trace: #C %s+0x%lx %s\n", dc.dli_fname,
            (unsigned long)((char*)caller - (char*)dc.dli_fbase), dc.dli_sname ? dc.dli_sname : "?");
  void* frames[64];
  const int n = backtrace(frames, 64);
  fprintf(stderr, "segv_trace: signal %d at address %p\n", sig, info->si_addr);
  for (int i = 0; i < n; ++i) {
    Dl_info d;
    if (dladdr(frames[i], &d) && d.dli_fname)
      fprintf(stderr, "segv_trace: #%d %s+0x%lx %s\n", i, d.dli_fname,
              (unsigned long)((char*)frames[i] - (char*)d.dli_fbase), d.dli_sname ? d.dli_sname : "?");
    else
      fprintf(stderr, "segv_trace: #%d %p\n", i, frames[i]);
  }
  _exit(139);
}

__attribute__((constructor)) static void install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, NULL);
}
