#include "serve/registered_matrices.h"

#include <filesystem>

#include "sparse/error.h"

namespace sparserl {

namespace fs = std::filesystem;

namespace {

// "cant" for "cant.mtx" or "cant.mtx.gz"; "" for any other file.
std::string matrix_name(const std::string& file) {
  for (const std::string ext : {".mtx.gz", ".mtx"})
    if (file.size() > ext.size() && file.compare(file.size() - ext.size(), ext.size(), ext) == 0)
      return file.substr(0, file.size() - ext.size());
  return "";
}

}  // namespace

registered_matrices::registered_matrices(const std::string& dir) : dir_(dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw error("--matrices " + dir + ": cannot list (" + ec.message() + ")");
  for (const fs::directory_entry& entry : it) {
    const std::string name = matrix_name(entry.path().filename().string());
    if (name.empty() || !entry.is_regular_file(ec)) continue;
    const auto [at, inserted] = paths_.emplace(name, entry.path().string());
    if (!inserted)
      throw error("--matrices " + dir + ": " + at->second + " and " + entry.path().string() +
                  " both register the name \"" + name + "\"");
  }
}

std::optional<std::string> registered_matrices::path_of(const std::string& name) const {
  const auto it = paths_.find(name);
  if (it == paths_.end()) return std::nullopt;
  return it->second;
}

}  // namespace sparserl
