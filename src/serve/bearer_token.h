#pragma once
// The service's optional bearer token (--token FILE): requests must send
// "Authorization: Bearer <token>". The comparison is constant-time in the token's content and
// length (SHA-256 of both sides, then CRYPTO_memcmp), so timing reveals nothing about the token.
#include <string>

namespace sparserl {

// The file's content less trailing whitespace (a final newline). Throws sparserl::error
// "--token <path>: <why>" when it cannot be read or is empty.
std::string read_token_file(const std::string& path);

class bearer_check {
 public:
  explicit bearer_check(std::string token = "");  // "": no token required

  bool required() const { return !digest_.empty(); }
  // True when no token is required, or `authorization` is "Bearer <the token>".
  bool allows(const std::string& authorization) const;

 private:
  std::string digest_;  // raw SHA-256 of the token; "" when none is configured
};

}  // namespace sparserl
