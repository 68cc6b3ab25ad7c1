#include "eval/emu/guarded_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "sparse/error.h"

namespace sparserl::emu {

namespace {

enum class region_kind : uint8_t { unused, buffer, stacks };

// What the fault handler knows about every mapping; a fixed table, so reading it needs no lock
// and no allocation.
struct region {
  region_kind kind = region_kind::unused;
  char name[48] = {};
  uintptr_t map_begin = 0, map_end = 0;    // the whole mapping, guards included
  uintptr_t data_begin = 0, data_end = 0;  // the bytes the program was given
};
constexpr int max_regions = 64;
region regions[max_regions];

size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }
size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

int add_region(region_kind kind, const std::string& name, uintptr_t map_begin, uintptr_t map_end,
               uintptr_t data_begin, uintptr_t data_end) {
  for (int i = 0; i < max_regions; ++i) {
    if (regions[i].kind != region_kind::unused) continue;
    region& r = regions[i];
    r.kind = kind;
    std::strncpy(r.name, name.c_str(), sizeof(r.name) - 1);
    r.map_begin = map_begin;
    r.map_end = map_end;
    r.data_begin = data_begin;
    r.data_end = data_end;
    return i;
  }
  return -1;  // only the fault message loses detail
}

void remove_region(int i) {
  if (i >= 0) regions[i] = region{};
}

unsigned char* map_or_throw(size_t bytes, const char* what) {
  void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw error(std::string("emulator: cannot map ") + std::to_string(bytes) + " bytes for " +
                what + ": " + std::strerror(errno));
  return static_cast<unsigned char*>(p);
}

void unprotect_or_throw(unsigned char* p, size_t bytes, const char* what) {
  if (bytes && ::mprotect(p, bytes, PROT_READ | PROT_WRITE) != 0)
    throw error(std::string("emulator: mprotect failed for ") + what + ": " + std::strerror(errno));
}

}  // namespace

guarded_buffer::guarded_buffer(size_t bytes, const std::string& name) : bytes_(bytes) {
  const size_t page = page_size();
  const size_t data_pages = round_up(round_up(bytes, 16), page);
  map_bytes_ = guard_bytes + data_pages + guard_bytes;
  map_ = map_or_throw(map_bytes_, name.c_str());
  unsigned char* pages = map_ + guard_bytes;
  try {
    unprotect_or_throw(pages, data_pages, name.c_str());
  } catch (...) {
    ::munmap(map_, map_bytes_);
    throw;
  }
  unsigned char* data_end = pages + data_pages;
  data_ = data_end - round_up(bytes, 16);
  std::memset(pages, 0xff, data_pages);  // slack reads as NaN, not as plausible zeros
  region_ = add_region(region_kind::buffer, name, reinterpret_cast<uintptr_t>(map_),
                       reinterpret_cast<uintptr_t>(map_ + map_bytes_),
                       reinterpret_cast<uintptr_t>(data_), reinterpret_cast<uintptr_t>(end()));
}

guarded_buffer::~guarded_buffer() { release(); }

void guarded_buffer::release() {
  remove_region(region_);
  if (map_) ::munmap(map_, map_bytes_);
  map_ = data_ = nullptr;
  map_bytes_ = bytes_ = 0;
  region_ = -1;
}

guarded_buffer::guarded_buffer(guarded_buffer&& other) noexcept { *this = std::move(other); }

guarded_buffer& guarded_buffer::operator=(guarded_buffer&& other) noexcept {
  if (this == &other) return *this;
  release();
  std::swap(map_, other.map_);
  std::swap(map_bytes_, other.map_bytes_);
  std::swap(data_, other.data_);
  std::swap(bytes_, other.bytes_);
  std::swap(region_, other.region_);
  return *this;
}

stack_pool::stack_pool(size_t count, size_t stack_bytes) : count_(count) {
  const size_t page = page_size();
  stack_bytes_ = round_up(stack_bytes, page);
  stride_ = page + stack_bytes_;
  map_ = map_or_throw(count_ * stride_, "fiber stacks");
  try {
    for (size_t i = 0; i < count_; ++i)
      unprotect_or_throw(map_ + i * stride_ + page, stack_bytes_, "fiber stacks");
  } catch (...) {
    ::munmap(map_, count_ * stride_);
    throw;
  }
  const auto begin = reinterpret_cast<uintptr_t>(map_);
  region_ = add_region(region_kind::stacks, "fiber stacks", begin, begin + count_ * stride_, begin,
                       begin + count_ * stride_);
}

stack_pool::~stack_pool() {
  remove_region(region_);
  if (map_) ::munmap(map_, count_ * stride_);
}

bool stack_pool::is_guard(uintptr_t address) const {
  const auto begin = reinterpret_cast<uintptr_t>(map_);
  if (address < begin || address >= begin + count_ * stride_) return false;
  return (address - begin) % stride_ < stride_ - stack_bytes_;
}

text_buffer& text_buffer::add(const char* s) {
  while (*s && used + 1 < capacity) p[used++] = *s++;
  if (capacity) p[used] = '\0';
  return *this;
}

text_buffer& text_buffer::add(uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  char s[24];
  for (int i = 0; i < n; ++i) s[i] = digits[n - 1 - i];
  s[n] = '\0';
  return add(s);
}

text_buffer& text_buffer::add_hex(uint64_t v) {
  char s[19] = "0x";
  for (int i = 0; i < 16; ++i) s[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
  s[18] = '\0';
  return add(s);
}

void describe_address(uintptr_t address, char* out, size_t capacity) {
  text_buffer t(out, capacity);
  for (const region& r : regions) {
    if (r.kind == region_kind::unused || address < r.map_begin || address >= r.map_end) continue;
    if (r.kind == region_kind::stacks) {
      t.add("a device thread's stack guard (stack overflow)");
      return;
    }
    if (address < r.data_begin)
      t.add(static_cast<uint64_t>(r.data_begin - address)).add(" bytes before the start of ");
    else if (address >= r.data_end)
      t.add(static_cast<uint64_t>(address - r.data_end)).add(" bytes past the end of ");
    else
      t.add(static_cast<uint64_t>(address - r.data_begin)).add(" bytes into ");
    t.add(r.name).add(" (").add(static_cast<uint64_t>(r.data_end - r.data_begin));
    t.add(" bytes long)");
    return;
  }
  t.add("address ").add_hex(address).add(", outside every buffer");
}

}  // namespace sparserl::emu
