#include "text/tokenizer_json.h"

#include "sparse/gzip_file.h"

namespace sparserl::text {

namespace {

nlohmann::ordered_json byte_level() {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", false},
          {"trim_offsets", false},
          {"use_regex", false}};
}

nlohmann::ordered_json ordered(const nlohmann::json& j) {
  return nlohmann::ordered_json::parse(j.dump());
}

nlohmann::ordered_json added_token_json(int64_t id, const std::string& content) {
  nlohmann::ordered_json t;
  if (id >= 0) t["id"] = id;
  t["content"] = content;
  t["single_word"] = false;
  t["lstrip"] = false;
  t["rstrip"] = false;
  t["normalized"] = false;
  t["special"] = true;
  return t;
}

nlohmann::ordered_json model_json(const tokenizer_json_parts& p) {
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (size_t id = 0; id < p.vocab->size(); ++id) vocab[(*p.vocab)[id]] = id;
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  for (const auto& [a, b] : *p.merges) merges.push_back({a, b});
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", ""},
          {"end_of_word_suffix", ""},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", false},
          {"vocab", vocab},
          {"merges", merges}};
}

}  // namespace

nlohmann::ordered_json make_tokenizer_json(const tokenizer_json_parts& p) {
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  for (size_t i = 0; i < p.special_tokens->size(); ++i)
    added.push_back(
        added_token_json(static_cast<int64_t>(p.vocab->size() + i), (*p.special_tokens)[i]));
  nlohmann::ordered_json doc;
  doc["version"] = "1.0";
  doc["truncation"] = nullptr;
  doc["padding"] = nullptr;
  doc["added_tokens"] = added;
  doc["normalizer"] = ordered(p.norm->to_json());
  doc["pre_tokenizer"] = ordered(p.pre->to_json());
  doc["post_processor"] = byte_level();
  doc["decoder"] = byte_level();
  doc["model"] = model_json(p);
  return doc;
}

nlohmann::ordered_json make_tokenizer_config(const tokenizer_json_parts& p) {
  nlohmann::ordered_json decoder = nlohmann::ordered_json::object();
  for (size_t i = 0; i < p.special_tokens->size(); ++i) {
    nlohmann::ordered_json t = added_token_json(-1, (*p.special_tokens)[i]);
    decoder[std::to_string(p.vocab->size() + i)] = t;
  }
  const nlohmann::ordered_json eos =
      p.eos_token.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(p.eos_token);
  return {{"tokenizer_class", "PreTrainedTokenizerFast"},
          {"added_tokens_decoder", decoder},
          {"bos_token", nullptr},
          {"eos_token", eos},
          {"pad_token", eos},
          {"unk_token", nullptr},
          {"clean_up_tokenization_spaces", false},
          {"split_special_tokens", false}};
}

void write_json_atomically(const std::filesystem::path& path, const nlohmann::ordered_json& doc) {
  const std::string text = doc.dump(2) + "\n";
  atomic_file_writer out(path.string(), false);
  out.write(text.data(), text.size());
  out.commit();
}

}  // namespace sparserl::text
