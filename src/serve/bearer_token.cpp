#include "serve/bearer_token.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sparse/error.h"

namespace sparserl {

namespace {

std::string raw_sha256(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

}  // namespace

std::string read_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error("--token " + path + ": cannot open (" + std::strerror(errno) + ")");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) throw error("--token " + path + ": the file is empty");
  if (token.find_first_of("\r\n") != std::string::npos)
    throw error("--token " + path + ": the token must be one line");
  return token;
}

bearer_check::bearer_check(std::string token) {
  if (!token.empty()) digest_ = raw_sha256(token);
}

bool bearer_check::allows(const std::string& authorization) const {
  if (!required()) return true;
  static const std::string scheme = "Bearer ";
  if (authorization.compare(0, scheme.size(), scheme) != 0) return false;
  const std::string offered = raw_sha256(authorization.substr(scheme.size()));
  return CRYPTO_memcmp(offered.data(), digest_.data(), digest_.size()) == 0;
}

}  // namespace sparserl
