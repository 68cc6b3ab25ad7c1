#include "eval/wire.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sparserl::wire {

namespace {

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw error(std::string("wire: write failed: ") + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// Reads exactly n bytes; returns the count read before EOF (n on success).
size_t read_all(int fd, char* p, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw error(std::string("wire: read failed: ") + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

}  // namespace

void write_message(int fd, const std::vector<char>& payload) {
  const uint64_t n = payload.size();
  write_all(fd, reinterpret_cast<const char*>(&n), sizeof(n));
  write_all(fd, payload.data(), payload.size());
}

bool read_message(int fd, std::vector<char>& payload, uint64_t max_bytes) {
  uint64_t n = 0;
  const size_t got = read_all(fd, reinterpret_cast<char*>(&n), sizeof(n));
  if (got == 0) return false;
  if (got != sizeof(n)) throw error("wire: peer closed inside a frame header");
  if (n > max_bytes) throw error("wire: frame of " + std::to_string(n) + " bytes exceeds limit");
  payload.resize(n);
  if (read_all(fd, payload.data(), n) != n) throw error("wire: peer closed inside a frame");
  return true;
}

}  // namespace sparserl::wire
