#include "text/decoder.h"

#include <nlohmann/json.hpp>

#include "sparse/error.h"
#include "text/byte_level.h"
#include "text/utf8.h"

namespace sparserl::text {

decoder decoder::from_json(const nlohmann::json& j) {
  decoder d;
  if (j.is_null()) return d;
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw error("decoder: expected an object with a string \"type\"");
  if (j["type"] != "ByteLevel")
    throw error("decoder: unsupported type " + j["type"].dump() + " (supported: ByteLevel, null)");
  d.byte_level_ = true;
  return d;
}

std::string decoder::decode(const std::vector<const std::string*>& tokens) const {
  std::string out;
  if (!byte_level_) {
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + *tokens[i];
    return out;
  }
  // A token with a character outside the byte map (an added token such as "\n\n") stays as is.
  for (const std::string* t : tokens)
    if (!append_chars_as_bytes(*t, out)) out += *t;
  return find_invalid_utf8(out) == std::string::npos ? out : to_valid_utf8(out);
}

}  // namespace sparserl::text
