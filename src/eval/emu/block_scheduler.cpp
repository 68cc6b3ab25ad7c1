#include "eval/emu/block_scheduler.h"

#include <cstdarg>
#include <cstdio>
#include <memory>
#include <utility>

namespace sparserl::emu {

namespace ctx = boost::context;

block_scheduler* active_scheduler = nullptr;

namespace {

constexpr uint64_t undefined_bits = ~uint64_t{0};  // a shuffle from a lane not taking part

bool has(unsigned int set, uint32_t lane) { return (set >> lane) & 1u; }

}  // namespace

// Hands boost.context the preallocated stack of one thread: creating a fiber then allocates
// nothing (its control record is placed on that stack).
struct block_scheduler::stack_ref {
  const stack_pool* pool;
  size_t index;
  ctx::stack_context allocate() {
    ctx::stack_context sc;
    sc.size = pool->stack_bytes();
    sc.sp = pool->top(index);
    return sc;
  }
  void deallocate(ctx::stack_context&) noexcept {}
};

block_scheduler::block_scheduler(uint32_t max_threads, size_t stack_bytes)
    : stacks_(max_threads, stack_bytes), slots_(max_threads) {}

const char* block_scheduler::run_block(entry_function entry, void* const* args, uint3 block,
                                       dim3 block_dim) {
  if (block_dim.x == 0 || block_dim.x > slots_.size())
    return fail("block of %u threads: the emulator prepared %zu", block_dim.x, slots_.size());
  entry_ = entry;
  args_ = args;
  block_ = block;
  blockIdx = block;
  blockDim = block_dim;
  start_threads(block_dim.x);
  for (;;) {
    bool any_left = false;
    for (uint32_t t = 0; t < count_; ++t) {
      if (slots_[t].st == state::runnable) resume(t);
      any_left |= slots_[t].st != state::done;
    }
    if (!any_left) return nullptr;
    // Nothing can run: every live thread waits. Collectives first (their lanes may then reach
    // the barrier), the barrier once every thread is at it.
    bool failed = false;
    const bool released = release_warps(failed);
    if (failed) return message_;
    if (released || try_release_barrier()) continue;
    return describe_deadlock();
  }
}

void block_scheduler::start_threads(uint32_t count) {
  count_ = count;
  for (uint32_t t = 0; t < count; ++t) {
    thread_slot& s = slots_[t];
    s.st = state::runnable;
    s.fiber = ctx::fiber(std::allocator_arg, stack_ref{&stacks_, t}, [this, t](ctx::fiber&& back) {
      slots_[t].back = std::move(back);
      entry_(args_);
      slots_[t].st = state::done;
      return std::move(slots_[t].back);
    });
  }
}

void block_scheduler::resume(uint32_t t) {
  current_ = t;
  threadIdx = uint3{t, 0, 0};
  slots_[t].fiber = std::move(slots_[t].fiber).resume();
}

void block_scheduler::suspend(state st) {
  thread_slot& s = slots_[current_];
  s.st = st;
  s.back = std::move(s.back).resume();  // back here once the scheduler released this thread
}

int block_scheduler::barrier(int op, int predicate) {
  thread_slot& s = slots_[current_];
  s.op = op;
  s.predicate = predicate != 0;
  suspend(state::at_barrier);
  return static_cast<int>(s.result);
}

uint64_t block_scheduler::warp_collective(int op, unsigned int mask, uint64_t bits, int arg,
                                          int width) {
  thread_slot& s = slots_[current_];
  s.op = op;
  s.mask = mask;
  s.bits = bits;
  s.arg = arg;
  s.width = width;
  suspend(state::at_warp);
  return s.result;
}

unsigned int block_scheduler::active_mask() const {
  const uint32_t base = current_ / 32 * 32;
  unsigned int mask = 0;
  for (uint32_t l = 0; l < 32 && base + l < count_; ++l)
    if (slots_[base + l].st != state::done) mask |= 1u << l;
  return mask;
}

bool block_scheduler::release_warps(bool& failed) {
  bool released = false;
  for (uint32_t w = 0; w * 32 < count_ && !failed; ++w) released |= release_warp(w, failed);
  return released;
}

bool block_scheduler::release_warp(uint32_t warp, bool& failed) {
  const uint32_t base = warp * 32;
  unsigned int waiting = 0, gone = 0;  // gone: exited, or beyond the block
  for (uint32_t l = 0; l < 32; ++l) {
    if (base + l >= count_ || slots_[base + l].st == state::done)
      gone |= 1u << l;
    else if (slots_[base + l].st == state::at_warp)
      waiting |= 1u << l;
  }
  // A lane may go when every live lane its mask names waits too: the greatest such set.
  unsigned int group = waiting;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t l = 0; l < 32; ++l) {
      if (has(group, l) && (slots_[base + l].mask & ~gone & ~group)) {
        group &= ~(1u << l);
        changed = true;
      }
    }
  }
  if (!group) return false;
  while (group) {  // lanes that passed the same mask make one collective
    const uint32_t first = static_cast<uint32_t>(__builtin_ctz(group));
    const unsigned int mask = slots_[base + first].mask;
    unsigned int members = 0;
    for (uint32_t l = first; l < 32; ++l)
      if (has(group, l) && slots_[base + l].mask == mask) members |= 1u << l;
    for (uint32_t l = first; l < 32; ++l) {
      if (has(members, l) && slots_[base + l].op != slots_[base + first].op) {
        failed = true;
        fail(
            "warp collective in block (%u,%u,%u), warp %u: lanes %u and %u called different "
            "warp intrinsics with the same mask 0x%08x",
            block_.x, block_.y, block_.z, warp, first, l, mask);
        return true;
      }
    }
    const int width = slots_[base + first].width;
    const int op = slots_[base + first].op;
    if (op <= sparserl_emu::shfl_xor && (width < 1 || width > 32 || (width & (width - 1)))) {
      failed = true;
      fail("warp shuffle in block (%u,%u,%u), warp %u: width %d is not a power of two in 1..32",
           block_.x, block_.y, block_.z, warp, width);
      return true;
    }
    compute_collective(warp, members);
    group &= ~members;
  }
  return true;
}

void block_scheduler::compute_collective(uint32_t warp, uint32_t group) {
  const uint32_t base = warp * 32;
  uint32_t ballot = 0, sum = 0, and_all = ~0u, or_all = 0, xor_all = 0;
  uint32_t min_u = ~0u, max_u = 0;
  int32_t min_i = INT32_MAX, max_i = INT32_MIN;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!has(group, l)) continue;
    const uint64_t b = slots_[base + l].bits;
    const auto v = static_cast<uint32_t>(b);
    if (b) ballot |= 1u << l;
    sum += v;
    and_all &= v;
    or_all |= v;
    xor_all ^= v;
    min_u = v < min_u ? v : min_u;
    max_u = v > max_u ? v : max_u;
    min_i = static_cast<int32_t>(v) < min_i ? static_cast<int32_t>(v) : min_i;
    max_i = static_cast<int32_t>(v) > max_i ? static_cast<int32_t>(v) : max_i;
  }
  for (uint32_t l = 0; l < 32; ++l) {
    if (!has(group, l)) continue;
    thread_slot& s = slots_[base + l];
    const auto w = static_cast<uint32_t>(s.width);
    const uint32_t segment = l & ~(w - 1);
    const auto d = static_cast<uint32_t>(s.arg);
    int64_t src = l;
    switch (s.op) {
      case sparserl_emu::shfl_idx:
        src = segment + (d & (w - 1));
        break;
      case sparserl_emu::shfl_up:
        src = l - segment >= d ? int64_t{l} - d : l;
        break;
      case sparserl_emu::shfl_down:
        src = uint64_t{l - segment} + d < w ? int64_t{l} + d : l;
        break;
      case sparserl_emu::shfl_xor: {
        const int64_t x = int64_t{l} ^ s.arg;  // later segments are out of reach, earlier not
        src = (x >= 0 && x < int64_t{segment} + w) ? x : l;
        break;
      }
      default:
        break;
    }
    switch (s.op) {
      case sparserl_emu::shfl_idx:
      case sparserl_emu::shfl_up:
      case sparserl_emu::shfl_down:
      case sparserl_emu::shfl_xor:
        s.result = src == l                                 ? s.bits
                   : has(group, static_cast<uint32_t>(src)) ? slots_[base + src].bits
                                                            : undefined_bits;
        break;
      case sparserl_emu::vote_ballot:
        s.result = ballot;
        break;
      case sparserl_emu::vote_any:
        s.result = ballot != 0;
        break;
      case sparserl_emu::vote_all:
        s.result = ballot == group;
        break;
      case sparserl_emu::reduce_add:
        s.result = sum;
        break;
      case sparserl_emu::reduce_min_u:
        s.result = min_u;
        break;
      case sparserl_emu::reduce_max_u:
        s.result = max_u;
        break;
      case sparserl_emu::reduce_min_i:
        s.result = static_cast<uint32_t>(min_i);
        break;
      case sparserl_emu::reduce_max_i:
        s.result = static_cast<uint32_t>(max_i);
        break;
      case sparserl_emu::reduce_and:
        s.result = and_all;
        break;
      case sparserl_emu::reduce_or:
        s.result = or_all;
        break;
      case sparserl_emu::reduce_xor:
        s.result = xor_all;
        break;
      case sparserl_emu::match_any: {
        uint32_t same = 0;
        for (uint32_t j = 0; j < 32; ++j)
          if (has(group, j) && slots_[base + j].bits == s.bits) same |= 1u << j;
        s.result = same;
        break;
      }
      default:
        s.result = 0;
        break;  // sync_warp
    }
  }
  for (uint32_t l = 0; l < 32; ++l)
    if (has(group, l)) slots_[base + l].st = state::runnable;
}

bool block_scheduler::try_release_barrier() {
  uint32_t at = 0, count = 0;
  for (uint32_t t = 0; t < count_; ++t) {
    const thread_slot& s = slots_[t];
    if (s.st != state::at_barrier) return false;  // exited, or stuck in a warp collective
    ++at;
    count += static_cast<uint32_t>(s.predicate);
  }
  for (uint32_t t = 0; t < count_; ++t) {
    thread_slot& s = slots_[t];
    switch (s.op) {
      case sparserl_emu::bar_count:
        s.result = count;
        break;
      case sparserl_emu::bar_and:
        s.result = count == at;
        break;
      case sparserl_emu::bar_or:
        s.result = count > 0;
        break;
      default:
        s.result = 0;
        break;
    }
    s.st = state::runnable;
  }
  return true;
}

const char* block_scheduler::describe_deadlock() {
  uint32_t at_barrier = 0, exited = 0, first_warp_lane = count_;
  for (uint32_t t = 0; t < count_; ++t) {
    if (slots_[t].st == state::at_barrier) ++at_barrier;
    if (slots_[t].st == state::done) ++exited;
    if (slots_[t].st == state::at_warp && first_warp_lane == count_) first_warp_lane = t;
  }
  if (first_warp_lane == count_)
    return fail(
        "deadlock: __syncthreads not reached by all threads of block (%u,%u,%u): "
        "%u of %u threads exited without reaching it",
        block_.x, block_.y, block_.z, exited, count_);
  return fail(
      "deadlock: warp collective in block (%u,%u,%u) never completes: thread %u waits "
      "with mask 0x%08x for lanes that never arrive (%u threads at __syncthreads, %u "
      "exited)",
      block_.x, block_.y, block_.z, first_warp_lane, slots_[first_warp_lane].mask, at_barrier,
      exited);
}

const char* block_scheduler::fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(message_, sizeof(message_), format, args);
  va_end(args);
  return message_;
}

}  // namespace sparserl::emu
