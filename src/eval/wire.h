#pragma once
// A small binary encoding for talking to sandboxed children (GPU workers, the CPU emulator):
// little-endian PODs and length-prefixed vectors/strings in one byte buffer, plus whole-message
// framing over a file descriptor. Readers check every length against what is left, so a child
// that dies mid-message (or lies) yields sparserl::error, never an overrun.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "sparse/error.h"

namespace sparserl::wire {

class writer {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const char*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  template <typename T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(v.size());
    const auto* p = reinterpret_cast<const char*>(v.data());
    bytes_.insert(bytes_.end(), p, p + v.size() * sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  const std::vector<char>& bytes() const { return bytes_; }
  std::vector<char> take() { return std::move(bytes_); }

 private:
  std::vector<char> bytes_;
};

class reader {
 public:
  reader(const char* data, size_t size) : data_(data), size_(size) {}
  explicit reader(const std::vector<char>& bytes) : reader(bytes.data(), bytes.size()) {}

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  template <typename T>
  std::vector<T> get_vector() {
    const uint64_t n = get<uint64_t>();
    if (n > (size_ - pos_) / sizeof(T)) throw error("wire: vector length exceeds message");
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  std::string get_string() {
    const uint64_t n = get<uint64_t>();
    if (n > size_ - pos_) throw error("wire: string length exceeds message");
    const char* p = take(n);
    return std::string(p, n);
  }
  bool done() const { return pos_ == size_; }

 private:
  const char* take(size_t n) {
    if (n > size_ - pos_) throw error("wire: message truncated");
    const char* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Frames: uint64 length + payload. write_message retries short writes and EINTR; read_message
// returns false on a clean EOF before any byte, throws on a partial frame or a frame > max_bytes.
void write_message(int fd, const std::vector<char>& payload);
bool read_message(int fd, std::vector<char>& payload, uint64_t max_bytes = uint64_t{16} << 30);

}  // namespace sparserl::wire
