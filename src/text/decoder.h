#pragma once
// The tokenizer.json "decoder": ByteLevel (each token's characters back to bytes, the bytes read
// as UTF-8 with U+FFFD for ill-formed parts, as HF) or null (tokens joined by spaces, as HF).
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace sparserl::text {

class decoder {
 public:
  decoder() = default;
  static decoder from_json(const nlohmann::json& j);  // throws sparserl::error for other types
  static decoder byte_level() {
    decoder d;
    d.byte_level_ = true;
    return d;
  }

  std::string decode(const std::vector<const std::string*>& tokens) const;

 private:
  bool byte_level_ = false;
};

}  // namespace sparserl::text
