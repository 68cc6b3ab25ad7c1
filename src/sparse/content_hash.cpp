#include "sparse/content_hash.h"

#include <openssl/evp.h>

#include <cstdint>
#include <memory>

#include "sparse/error.h"

namespace sparserl {

std::string sha256_hex(const std::vector<std::string_view>& parts) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw error("sha256: OpenSSL digest initialisation failed");
  for (std::string_view part : parts) {
    const uint64_t length = part.size();
    if (EVP_DigestUpdate(ctx.get(), &length, sizeof length) != 1 ||
        EVP_DigestUpdate(ctx.get(), part.data(), part.size()) != 1)
      throw error("sha256: OpenSSL digest update failed");
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1)
    throw error("sha256: OpenSSL digest finalisation failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

std::string csr_content_id(const csr_matrix& csr) {
  const int32_t shape[2] = {csr.rows, csr.cols};
  return "sha256:" +
         sha256_hex({std::string_view(reinterpret_cast<const char*>(shape), sizeof shape),
                     bytes_of(csr.row_ptr), bytes_of(csr.col_idx), bytes_of(csr.values)});
}

}  // namespace sparserl
