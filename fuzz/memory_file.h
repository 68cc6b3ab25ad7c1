#pragma once
// Fuzz input as a file the loaders can open by path, without touching the disk: an anonymous
// memfd, named /proc/self/fd/<n>. The loaders under test read paths (they map or stream files),
// and a memfd gives them a real regular file for each input at the cost of a copy.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace sparserl::fuzz {

class memory_file {
 public:
  memory_file(const uint8_t* data, size_t size) : fd_(::memfd_create("fuzz-input", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();  // the harness itself is broken, not the code under test
    for (size_t done = 0; done < size;) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
  }
  ~memory_file() { ::close(fd_); }
  memory_file(const memory_file&) = delete;
  memory_file& operator=(const memory_file&) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace sparserl::fuzz
