#include "text/tokenizer.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "sparse/json_depth.h"
#include "text/bpe_model.h"
#include "text/decoder.h"
#include "text/normalizer.h"
#include "text/post_processor.h"
#include "text/pretokenizer.h"
#include "text/utf8.h"

namespace sparserl::text {

namespace {

constexpr size_t max_json_bytes = size_t{1} << 30;

const nlohmann::json& field(const nlohmann::json& doc, const char* key) {
  static const nlohmann::json null_value;
  return doc.contains(key) ? doc[key] : null_value;
}

bool flag(const nlohmann::json& t, const char* key) {
  return t.contains(key) && t[key].is_boolean() && t[key].get<bool>();
}

// The added tokens with the ids HF assigns on load: a token already in the model keeps the
// model's id, the others are numbered on from the model's size, in file order. (HF only warns
// when that differs from the file's "id"; matching HF is what keeps ids model-compatible.)
std::vector<added_token> read_added_tokens(const nlohmann::json& list, const bpe_model& model) {
  std::vector<added_token> tokens;
  if (list.is_null()) return tokens;
  if (!list.is_array()) throw error("\"added_tokens\" must be an array");
  std::unordered_map<std::string, size_t> seen;
  int64_t next_id = static_cast<int64_t>(model.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& t = list[i];
    if (!t.is_object() || !t.contains("content") || !t["content"].is_string())
      throw error("added_tokens[" + std::to_string(i) + "] lacks a string \"content\"");
    added_token a;
    a.content = t["content"];
    if (a.content.empty()) continue;
    a.single_word = flag(t, "single_word");
    a.lstrip = flag(t, "lstrip");
    a.rstrip = flag(t, "rstrip");
    a.normalized = flag(t, "normalized");
    a.special = flag(t, "special");
    if (const auto it = seen.find(a.content); it != seen.end()) {  // re-added: new flags, same id
      a.id = tokens[it->second].id;
      tokens[it->second] = a;
      continue;
    }
    const auto in_model = model.token_to_id(a.content);
    a.id = in_model ? *in_model : static_cast<int32_t>(next_id++);
    seen[a.content] = tokens.size();
    tokens.push_back(std::move(a));
  }
  return tokens;
}

std::optional<std::string> config_token(const nlohmann::json& config, const char* key) {
  if (!config.contains(key) || config[key].is_null()) return std::nullopt;
  const nlohmann::json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  throw error(std::string("\"") + key + "\" must be a string, {\"content\": ...} or null");
}

}  // namespace

struct bpe_tokenizer::parts {
  normalizer norm;
  pre_tokenizer pre;
  bpe_model model;
  added_vocabulary added;
  post_processor post;
  decoder dec;
};

bpe_tokenizer::bpe_tokenizer(std::unique_ptr<parts> p) : parts_(std::move(p)) {}
bpe_tokenizer::bpe_tokenizer(bpe_tokenizer&&) noexcept = default;
bpe_tokenizer& bpe_tokenizer::operator=(bpe_tokenizer&&) noexcept = default;
bpe_tokenizer::~bpe_tokenizer() = default;

bpe_tokenizer bpe_tokenizer::from_json_text(std::string_view json, const std::string& origin) {
  try {
    const nlohmann::json doc = nlohmann::json::parse(json.begin(), json.end(), json_depth_limit());
    if (!doc.is_object()) throw error("the top level is not a JSON object");
    if (!doc.contains("model")) throw error("no \"model\" section");
    bpe_model model = bpe_model::from_json(doc["model"]);
    normalizer norm = normalizer::from_json(field(doc, "normalizer"));
    added_vocabulary added(read_added_tokens(field(doc, "added_tokens"), model), norm);
    auto p = std::unique_ptr<parts>(new parts{
        std::move(norm), pre_tokenizer::from_json(field(doc, "pre_tokenizer")), std::move(model),
        std::move(added), post_processor::from_json(field(doc, "post_processor")),
        decoder::from_json(field(doc, "decoder"))});
    bpe_tokenizer tok(std::move(p));
    // The post-processor's ids are written in the file, not looked up: each must be a token, or
    // encode would hand the model ids beyond its vocabulary.
    for (int32_t id : tok.parts_->post.added_ids())
      if (!tok.id_to_token(id))
        throw error("post_processor: token id " + std::to_string(id) + " is not in the vocabulary");
    tok.default_special_ids();
    return tok;
  } catch (const nlohmann::json::exception& e) {
    throw error(origin + ": malformed tokenizer.json: " + e.what());
  } catch (const error& e) {
    throw error(origin + ": " + e.what());
  }
}

bpe_tokenizer bpe_tokenizer::load(const std::filesystem::path& path) {
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(path, ec);
  const std::filesystem::path file = is_dir ? path / "tokenizer.json" : path;
  if (!std::filesystem::exists(file, ec))
    throw error(file.string() +
                ": no such file (expected a tokenizer.json or a directory with one)");
  bpe_tokenizer tok =
      from_json_text(read_file_decompressed(file.string(), max_json_bytes), file.string());
  const std::filesystem::path config = file.parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config, ec)) tok.read_config(config);
  return tok;
}

void bpe_tokenizer::default_special_ids() {
  eos_ = token_to_id("<|endoftext|>");
  if (!eos_) eos_ = token_to_id("</s>");
  pad_ = eos_;
}

void bpe_tokenizer::read_config(const std::filesystem::path& config_path) {
  const std::string where = config_path.string();
  try {
    const nlohmann::json config =
        nlohmann::json::parse(read_file_decompressed(where, max_json_bytes), json_depth_limit());
    if (!config.is_object()) throw error("the top level is not a JSON object");
    auto resolve = [&](const char* key, std::optional<int32_t>& slot) {
      const auto name = config_token(config, key);
      if (!name) return;
      slot = token_to_id(*name);
      if (!slot) throw error(std::string(key) + " '" + *name + "' is not in the vocabulary");
    };
    resolve("eos_token", eos_);
    pad_ = eos_;
    resolve("pad_token", pad_);
    resolve("bos_token", bos_);
    resolve("unk_token", unk_);
  } catch (const nlohmann::json::exception& e) {
    throw error(where + ": malformed JSON: " + e.what());
  } catch (const error& e) {
    throw error(where + ": " + e.what());
  }
}

// Normalizes a stretch without raw added tokens, cuts out the normalized added tokens, and runs
// the pre-tokenizer and BPE over the rest.
void bpe_tokenizer::encode_plain(std::string_view text, std::vector<int32_t>& ids) const {
  const parts& p = *parts_;
  const std::string normalized = p.norm.apply(text);
  std::vector<text_segment> segments;
  p.added.split(normalized, true, encode_special_tokens_, segments);
  std::vector<std::string> words;
  for (const text_segment& s : segments) {
    if (s.id >= 0) {
      ids.push_back(s.id);
      continue;
    }
    p.pre.split(std::string_view(normalized).substr(s.begin, s.end - s.begin), words);
    for (const std::string& w : words) p.model.tokenize(w, ids);
  }
}

std::vector<int32_t> bpe_tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  if (const size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
    throw error("encode: the text is not valid UTF-8 (first bad byte at offset " +
                std::to_string(bad) + ")");
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  std::vector<text_segment> segments;
  parts_->added.split(text, false, encode_special_tokens_, segments);
  for (const text_segment& s : segments) {
    if (s.id >= 0)
      ids.push_back(s.id);
    else
      encode_plain(text.substr(s.begin, s.end - s.begin), ids);
  }
  if (add_special_tokens) parts_->post.apply(ids);
  return ids;
}

std::vector<std::vector<int32_t>> bpe_tokenizer::encode_batch(const std::vector<std::string>& texts,
                                                              bool add_special_tokens) const {
  std::vector<std::vector<int32_t>> out(texts.size());
  std::vector<std::string> failures(texts.size());
  const int64_t n = static_cast<int64_t>(texts.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < n; ++i) {
    try {  // an exception must not leave an OpenMP region
      out[i] = encode(texts[i], add_special_tokens);
    } catch (const std::exception& e) {
      failures[i] = e.what();
    }
  }
  for (size_t i = 0; i < failures.size(); ++i)
    if (!failures[i].empty())
      throw error("encode_batch: text " + std::to_string(i) + ": " + failures[i]);
  return out;
}

std::string bpe_tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  const parts& p = *parts_;
  std::vector<const std::string*> tokens;
  tokens.reserve(ids.size());
  for (const int32_t id : ids) {
    if (const added_token* a = p.added.find(id)) {
      if (!(skip_special_tokens && a->special)) tokens.push_back(&a->content);
    } else if (const std::string* t = p.model.id_to_token(id)) {
      if (!(skip_special_tokens && p.added.is_special(*t))) tokens.push_back(t);
    }
  }
  return p.dec.decode(tokens);
}

std::vector<std::string> bpe_tokenizer::decode_batch(const std::vector<std::vector<int32_t>>& ids,
                                                     bool skip_special_tokens) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const auto& one : ids) out.push_back(decode(one, skip_special_tokens));
  return out;
}

size_t bpe_tokenizer::vocab_size() const {
  size_t n = parts_->model.size();
  for (const added_token& a : parts_->added.tokens())
    if (!parts_->model.token_to_id(a.content)) ++n;
  return n;
}

std::optional<int32_t> bpe_tokenizer::token_to_id(std::string_view token) const {
  if (const added_token* a = parts_->added.find(token)) return a->id;
  return parts_->model.token_to_id(token);
}

std::optional<std::string> bpe_tokenizer::id_to_token(int32_t id) const {
  if (const added_token* a = parts_->added.find(id)) return a->content;
  if (const std::string* t = parts_->model.id_to_token(id)) return *t;
  return std::nullopt;
}

bool bpe_tokenizer::is_special(int32_t id) const {
  const added_token* a = parts_->added.find(id);
  return a && a->special;
}

const std::vector<added_token>& bpe_tokenizer::added_tokens() const {
  return parts_->added.tokens();
}

}  // namespace sparserl::text
