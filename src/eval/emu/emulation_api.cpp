// The runtime half of eval/emu/cuda_emulation.h: the built-in variables and the functions device
// code calls. The child executable exports them (ENABLE_EXPORTS), and the program's shared object
// binds to them when it is loaded. Everything here runs under seccomp strict mode.
#include <cstdarg>
#include <cstdio>

#include "eval/emu/block_scheduler.h"
#include "eval/emu/child_report.h"

extern "C" {

uint3 threadIdx = {0, 0, 0};
uint3 blockIdx = {0, 0, 0};
dim3 blockDim;
dim3 gridDim;
unsigned char* sparserl_emu_dynamic_shared = nullptr;

int sparserl_emu_syncthreads(int op, int predicate) {
  return sparserl::emu::active_scheduler->barrier(op, predicate);
}

uint64_t sparserl_emu_warp(int op, unsigned int mask, uint64_t bits, int arg, int width) {
  return sparserl::emu::active_scheduler->warp_collective(op, mask, bits, arg, width);
}

unsigned int sparserl_emu_activemask(void) {
  return sparserl::emu::active_scheduler->active_mask();
}

int sparserl_emu_printf(const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  if (n > 0)
    sparserl::emu::child_reporter.append_log(
        line, static_cast<size_t>(n) < sizeof(line) ? static_cast<size_t>(n) : sizeof(line) - 1);
  return n;
}

long long sparserl_emu_clock64(void) {
  static long long ticks = 0;  // monotone; the emulator has no meaningful clock
  return ticks += 1000;
}

void sparserl_emu_trap(const char* what) {
  char message[256];
  std::snprintf(message, sizeof(message), "device code stopped: %s in block (%u,%u,%u) thread %u",
                what, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
  sparserl::emu::child_reporter.fail_and_exit(message);
}

// Replaces glibc's for the loaded program (the executable comes first in symbol lookup): a failed
// assert() reports instead of calling abort(), which seccomp would kill silently.
[[noreturn]] void __assert_fail(const char* assertion, const char* file, unsigned int line,
                                const char* function) noexcept {
  char message[512];
  std::snprintf(message, sizeof(message),
                "device assertion failed: %s (%s:%u in %s), block (%u,%u,%u) thread %u", assertion,
                file, line, function, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
  sparserl::emu::child_reporter.fail_and_exit(message);
}

}  // extern "C"
