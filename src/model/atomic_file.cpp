#include "model/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sparse/error.h"

namespace sparserl {

namespace {

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, std::string_view chunk, const std::string& tmp) {
  while (!chunk.empty()) {
    const ssize_t n = ::write(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw error("cannot write " + tmp + ": " + errno_text());
    chunk.remove_prefix(static_cast<size_t>(n));
  }
}

// Makes the rename itself durable; a failure here is not worth failing the write for.
void sync_parent_dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomic(const std::string& path, const std::vector<std::string_view>& chunks) {
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw error("cannot create a temporary file next to " + path + ": " + errno_text());
  bool open = true;
  try {
    for (std::string_view chunk : chunks) write_all(fd, chunk, tmp);
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0)
      throw error("cannot flush " + tmp + ": " + errno_text());
    open = false;  // close releases the descriptor even when it reports an error
    if (::close(fd) != 0) throw error("cannot close " + tmp + ": " + errno_text());
  } catch (...) {
    if (open) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw error("cannot rename " + tmp + " to " + path + ": " + why);
  }
  sync_parent_dir(path);
}

}  // namespace sparserl
