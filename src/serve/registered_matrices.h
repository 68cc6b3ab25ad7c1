#pragma once
// The registered set (--matrices DIR): every *.mtx / *.mtx.gz directly in DIR, by its name less
// the extension ("cant.mtx.gz" -> "cant"). Only the listing happens at start-up; a file is read
// when a request first names it (then kept in the matrix cache), so a large set costs nothing
// until used.
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace sparserl {

class registered_matrices {
 public:
  registered_matrices() = default;  // the empty set
  // Throws sparserl::error "--matrices <dir>: <why>" when DIR cannot be listed, or two files give
  // one name (a.mtx and a.mtx.gz).
  explicit registered_matrices(const std::string& dir);

  std::optional<std::string> path_of(const std::string& name) const;
  size_t size() const { return paths_.size(); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::map<std::string, std::string> paths_;
};

}  // namespace sparserl
