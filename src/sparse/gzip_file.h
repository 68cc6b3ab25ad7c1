#pragma once
// Whole-file reads that see through gzip, and writes that never leave a half-written file behind.
// Errors are sparserl::error "<path>: <why>" (with strerror / zlib's reason where there is one).
#include <sys/types.h>
#include <zlib.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparserl {

// The file's bytes, gunzipped when it starts with the gzip magic bytes 1f 8b (whatever its name;
// concatenated gzip members are read as one stream). Refuses contents longer than max_size, so a
// small .gz cannot expand into an unbounded allocation.
std::string read_file_decompressed(const std::string& path, size_t max_size);

// Streams into "<path>.tmp.<pid>.<n>" in the same directory (gzip-compressed when asked) and only
// commit() renames it over `path`, after an fsync (and then syncs the directory, so the rename
// itself survives a crash). Destroying it uncommitted removes the temp file. The file gets
// `exact_mode` when given, else 0666 less the umask.
class atomic_file_writer {
 public:
  atomic_file_writer(std::string path, bool gzip, std::optional<mode_t> exact_mode = std::nullopt);
  ~atomic_file_writer();
  atomic_file_writer(const atomic_file_writer&) = delete;
  atomic_file_writer& operator=(const atomic_file_writer&) = delete;

  void write(const char* data, size_t size);
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  void close_quietly();

  std::string path_;
  std::string temp_path_;
  std::optional<mode_t> exact_mode_;
  int fd_ = -1;
  gzFile gz_ = nullptr;
  bool committed_ = false;
};

// The whole file at once: the chunks, in order, through an atomic_file_writer.
void write_file_atomic(const std::string& path, const std::vector<std::string_view>& chunks,
                       std::optional<mode_t> exact_mode = std::nullopt);

}  // namespace sparserl
