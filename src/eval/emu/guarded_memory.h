#pragma once
// Memory the emulated program touches, laid out so that stepping outside it faults: each buffer is
// its own mapping between PROT_NONE guard regions of guard_bytes, its data flush against the upper
// guard (the start rounded down to 16 bytes, as float4 loads of aligned data need; the few slack
// bytes are filled with 0xff). Fiber stacks sit above one guard page each. Every mapping is
// registered, so the fault handler can say what an address was ("4 bytes past the end of y").
#include <cstddef>
#include <cstdint>
#include <string>

namespace sparserl::emu {

constexpr size_t guard_bytes = size_t{1} << 20;

class guarded_buffer {
 public:
  guarded_buffer() = default;
  // Throws sparserl::error when the mapping fails (before the sandbox is entered).
  guarded_buffer(size_t bytes, const std::string& name);
  ~guarded_buffer();
  guarded_buffer(guarded_buffer&& other) noexcept;
  guarded_buffer& operator=(guarded_buffer&& other) noexcept;
  guarded_buffer(const guarded_buffer&) = delete;
  guarded_buffer& operator=(const guarded_buffer&) = delete;

  unsigned char* data() const { return data_; }
  size_t size() const { return bytes_; }
  unsigned char* end() const { return data_ + bytes_; }

 private:
  void release();
  unsigned char* map_ = nullptr;
  size_t map_bytes_ = 0;
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;
  int region_ = -1;
};

class stack_pool {
 public:
  stack_pool(size_t count, size_t stack_bytes);  // throws sparserl::error
  ~stack_pool();
  stack_pool(const stack_pool&) = delete;
  stack_pool& operator=(const stack_pool&) = delete;

  size_t stack_bytes() const { return stack_bytes_; }
  void* top(size_t i) const { return map_ + (i + 1) * stride_; }  // stacks grow down
  bool is_guard(uintptr_t address) const;

 private:
  unsigned char* map_ = nullptr;
  size_t count_ = 0, stack_bytes_ = 0, stride_ = 0;
  int region_ = -1;
};

// Writes what `address` is into `out` (NUL-terminated), e.g. "4 bytes past the end of y",
// "a device thread's stack guard (stack overflow)". Async-signal-safe.
void describe_address(uintptr_t address, char* out, size_t capacity);

// Async-signal-safe text building for fault messages.
struct text_buffer {
  char* p;
  size_t capacity, used = 0;
  text_buffer(char* out, size_t cap) : p(out), capacity(cap) {
    if (capacity) p[0] = '\0';
  }
  text_buffer& add(const char* s);
  text_buffer& add(uint64_t v);
  text_buffer& add_hex(uint64_t v);
};

}  // namespace sparserl::emu
