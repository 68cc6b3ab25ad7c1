#include "sparse/gzip_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "sparse/error.h"

namespace sparserl {

namespace {

constexpr size_t max_io_chunk = size_t{1} << 30;  // gzread/gzwrite take an unsigned int length

[[noreturn]] void fail_io(const std::string& path, const std::string& what, int err) {
  throw error(path + ": " + what + ": " + std::strerror(err));
}

std::string gz_reason(gzFile gz) {
  int errnum = Z_OK;
  const char* msg = gzerror(gz, &errnum);
  if (errnum == Z_ERRNO) return std::strerror(errno);
  return msg && *msg ? msg : "unknown zlib error";
}

struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

// Fills `out` through read_some(dst, max) -> bytes (0 at the end), growing it geometrically from
// `hint`; one byte of slack past max_size tells "exactly max_size" from "too large".
template <typename read_fn>
std::string read_all(const std::string& path, size_t hint, size_t max_size, read_fn read_some) {
  const size_t cap = max_size == SIZE_MAX ? max_size : max_size + 1;
  std::string out;
  out.resize(std::min(std::max<size_t>(hint, 4096), cap));
  size_t used = 0;
  for (;;) {
    if (used == out.size()) {
      if (out.size() >= cap) break;
      out.resize(out.size() > cap / 2 ? cap : out.size() * 2);
    }
    const size_t n = read_some(&out[used], std::min(out.size() - used, max_io_chunk));
    if (n == 0) break;
    used += n;
  }
  if (used > max_size)
    throw error(path + ": contents exceed the limit of " + std::to_string(max_size) + " bytes");
  out.resize(used);
  return out;
}

std::string read_plain(const std::string& path, int fd, size_t file_size, size_t max_size) {
  if (file_size > max_size)
    throw error(path + ": file has " + std::to_string(file_size) +
                " bytes, more than the limit of " + std::to_string(max_size) + " bytes");
  return read_all(path, file_size + 1, max_size, [&](char* dst, size_t n) -> size_t {
    for (;;) {
      const ssize_t got = ::read(fd, dst, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) fail_io(path, "cannot read", errno);
    }
  });
}

// The gzip trailer's ISIZE (uncompressed size mod 2^32 of the last member) sizes the first
// allocation; it is only a hint, capped by deflate's best ratio so a forged one costs little.
size_t gzip_size_hint(int fd, size_t file_size) {
  unsigned char tail[4];
  if (file_size < 18 || ::pread(fd, tail, 4, static_cast<off_t>(file_size - 4)) != 4)
    return file_size * 4;
  const size_t isize = tail[0] | tail[1] << 8 | tail[2] << 16 | size_t{tail[3]} << 24;
  return std::min(std::max(isize, file_size), file_size * 1032) + 1;
}

std::string read_gzip(const std::string& path, fd_guard& fd, size_t file_size, size_t max_size) {
  const size_t hint = gzip_size_hint(fd.fd, file_size);
  gzFile gz = gzdopen(fd.fd, "rb");
  if (!gz) fail_io(path, "cannot open gzip stream", errno ? errno : ENOMEM);
  fd.fd = -1;  // gzclose owns it now
  struct gz_guard {
    gzFile gz;
    ~gz_guard() { gzclose(gz); }
  } guard{gz};
  gzbuffer(gz, 1 << 18);
  std::string out = read_all(path, hint, max_size, [&](char* dst, size_t n) -> size_t {
    const int got = gzread(gz, dst, static_cast<unsigned>(n));
    if (got < 0) throw error(path + ": corrupt gzip data: " + gz_reason(gz));
    return static_cast<size_t>(got);
  });
  int errnum = Z_OK;
  gzerror(gz, &errnum);
  if (errnum != Z_OK) throw error(path + ": corrupt gzip data: " + gz_reason(gz));
  return out;
}

// Best effort: a directory that cannot be opened or synced leaves the rename as durable as the
// file system makes it anyway.
void sync_parent_dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string read_file_decompressed(const std::string& path, size_t max_size) {
  fd_guard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) fail_io(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) fail_io(path, "cannot stat", errno);
  if (S_ISDIR(st.st_mode)) fail_io(path, "cannot read", EISDIR);
  const size_t file_size = st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
  unsigned char magic[2] = {0, 0};
  const bool gzip = ::pread(fd.fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (gzip) return read_gzip(path, fd, file_size, max_size);
  return read_plain(path, fd.fd, file_size, max_size);
}

atomic_file_writer::atomic_file_writer(std::string path, bool gzip,
                                       std::optional<mode_t> exact_mode)
    : path_(std::move(path)), exact_mode_(exact_mode) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_path_ = path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const int err = errno;
    temp_path_.clear();
    fail_io(path_, "cannot create a temporary file beside it", err);
  }
  if (gzip) {
    const int gz_fd = ::dup(fd_);
    gz_ = gz_fd >= 0 ? gzdopen(gz_fd, "wb") : nullptr;
    if (!gz_) {
      const int err = errno ? errno : ENOMEM;
      if (gz_fd >= 0) ::close(gz_fd);
      fail("cannot start a gzip stream", err);
    }
  }
}

atomic_file_writer::~atomic_file_writer() {
  if (committed_) return;
  close_quietly();
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void atomic_file_writer::write(const char* data, size_t size) {
  while (size > 0) {
    const size_t n = std::min(size, max_io_chunk);
    if (gz_) {
      if (gzwrite(gz_, data, static_cast<unsigned>(n)) != static_cast<int>(n)) {
        int errnum = Z_OK;
        gzerror(gz_, &errnum);
        fail("cannot write", errnum == Z_ERRNO ? errno : EIO);
      }
      data += n;
      size -= n;
      continue;
    }
    const ssize_t put = ::write(fd_, data, n);
    if (put < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", errno);
    }
    data += put;
    size -= static_cast<size_t>(put);
  }
}

void atomic_file_writer::commit() {
  if (gz_) {
    const int rc = gzclose_w(gz_);
    gz_ = nullptr;
    if (rc != Z_OK) fail("cannot write", rc == Z_ERRNO ? errno : EIO);
  }
  if (exact_mode_ && ::fchmod(fd_, *exact_mode_) != 0) fail("cannot set its mode", errno);
  // fsync before rename: after a crash the name points at the old file or the whole new one.
  if (::fsync(fd_) != 0) fail("cannot sync", errno);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) fail("cannot close", errno);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) fail("cannot rename into place", errno);
  committed_ = true;
  sync_parent_dir(path_);
}

void write_file_atomic(const std::string& path, const std::vector<std::string_view>& chunks,
                       std::optional<mode_t> exact_mode) {
  atomic_file_writer out(path, false, exact_mode);
  for (std::string_view chunk : chunks) out.write(chunk.data(), chunk.size());
  out.commit();
}

void atomic_file_writer::fail(const std::string& what, int err) {
  close_quietly();
  ::unlink(temp_path_.c_str());
  temp_path_.clear();
  fail_io(path_, what, err);
}

void atomic_file_writer::close_quietly() {
  if (gz_) gzclose_w(std::exchange(gz_, nullptr));
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

}  // namespace sparserl
