#pragma once
// Crash-safe file replacement: a reader sees the old file or the complete new one, never a torn
// write (temp file in the same directory, fsync, rename; the temp file is removed on error).
#include <string>
#include <string_view>
#include <vector>

namespace sparserl {

void write_file_atomic(const std::string& path, const std::vector<std::string_view>& chunks);

}  // namespace sparserl
