#pragma once
// Writes what bpe_trainer learned as HF files with Qwen2's structure: tokenizer.json (BPE model,
// NFC, Split + ByteLevel pre-tokenizer, ByteLevel post-processor and decoder, special tokens
// after the vocab) and a tokenizer_config.json naming eos / pad for transformers.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "text/normalizer.h"
#include "text/pretokenizer.h"

namespace sparserl::text {

struct tokenizer_json_parts {
  const std::vector<std::string>* vocab;  // by id
  const std::vector<std::pair<std::string, std::string>>* merges;
  const std::vector<std::string>* special_tokens;  // ids vocab.size(), vocab.size() + 1, ...
  const normalizer* norm;
  const pre_tokenizer* pre;
  std::string eos_token;  // empty: none
};

nlohmann::ordered_json make_tokenizer_json(const tokenizer_json_parts& parts);
nlohmann::ordered_json make_tokenizer_config(const tokenizer_json_parts& parts);

// `doc` into `path` through a temp file + fsync + rename, so readers never see half a file.
void write_json_atomically(const std::filesystem::path& path, const nlohmann::ordered_json& doc);

}  // namespace sparserl::text
