#pragma once
// Runs the CUDA threads of one block as fibers (boost.context) on the calling OS thread. A thread
// runs until it finishes or reaches __syncthreads / a warp collective; when no thread can run, the
// scheduler releases the collectives whose lanes have all arrived, then the barrier, else it
// reports the deadlock. Everything is allocated in the constructor: run_block() makes no system
// call and no allocation, as it runs under seccomp strict mode.
#include <boost/context/fiber.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "eval/emu/guarded_memory.h"

#define SPARSERL_EMU_RUNTIME
#include "eval/emu/cuda_emulation.h"

namespace sparserl::emu {

using entry_function = void (*)(void* const* args);

class block_scheduler {
 public:
  // Threads per block at most `max_threads`, each with a `stack_bytes` stack above a guard page.
  block_scheduler(uint32_t max_threads, size_t stack_bytes);
  block_scheduler(const block_scheduler&) = delete;
  block_scheduler& operator=(const block_scheduler&) = delete;

  // Runs every thread of block `block` of a launch with `block_dim` threads per block. Returns
  // nullptr when all threads finished, else the failure (deadlock, misuse of a warp collective),
  // which stays valid until the next call. The fibers of a failed block are abandoned, not
  // unwound: the caller reports and exits.
  const char* run_block(entry_function entry, void* const* args, uint3 block, dim3 block_dim);

  // Called by device code through the emulation interface, inside a thread's fiber.
  int barrier(int op, int predicate);
  uint64_t warp_collective(int op, unsigned int mask, uint64_t bits, int arg, int width);
  unsigned int active_mask() const;

  // The stack guard pages, for naming a fault.
  bool is_stack_guard(uintptr_t address) const { return stacks_.is_guard(address); }

 private:
  enum class state : uint8_t { runnable, at_barrier, at_warp, done };
  struct thread_slot {
    boost::context::fiber fiber;  // the thread, while suspended
    boost::context::fiber back;   // the scheduler, while the thread runs
    state st = state::done;
    int op = 0;  // barrier_op or warp_op
    int predicate = 0;
    unsigned int mask = 0;
    int arg = 0, width = 32;
    uint64_t bits = 0, result = 0;
  };
  struct stack_ref;  // boost.context stack allocator over stacks_

  void start_threads(uint32_t count);
  void resume(uint32_t t);
  void suspend(state st);
  bool release_warps(bool& failed);
  bool release_warp(uint32_t warp, bool& failed);
  void compute_collective(uint32_t warp, uint32_t group);
  bool try_release_barrier();
  const char* describe_deadlock();
  const char* fail(const char* format, ...) __attribute__((format(printf, 2, 3)));

  stack_pool stacks_;
  std::vector<thread_slot> slots_;
  uint32_t count_ = 0;    // threads in the running block
  uint32_t current_ = 0;  // the thread whose fiber runs
  uint3 block_{0, 0, 0};
  entry_function entry_ = nullptr;
  void* const* args_ = nullptr;
  char message_[512] = {};
};

// The scheduler device code talks to (set by the child before running a launch).
extern block_scheduler* active_scheduler;

}  // namespace sparserl::emu
