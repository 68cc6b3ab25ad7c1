#include "text/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <queue>
#include <shared_mutex>

#include "sparse/error.h"
#include "text/utf8.h"

namespace sparserl::text {

namespace {

constexpr int64_t max_token_id = int64_t{1} << 30;
constexpr size_t max_cached_word = 256;  // longer words are rare: not worth memory
constexpr size_t cache_capacity = 1 << 16;

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

std::pair<std::string, std::string> parse_merge(const nlohmann::json& m, size_t i) {
  const std::string where = "model.merges[" + std::to_string(i) + "]";
  if (m.is_string()) {  // the old form: "a b", exactly one space
    const std::string s = m;
    const size_t space = s.find(' ');
    if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
      throw error(where + ": " + in_quotes(s) + " is not two tokens separated by one space");
    return {s.substr(0, space), s.substr(space + 1)};
  }
  if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
    return {m[0].get<std::string>(), m[1].get<std::string>()};
  throw error(where + ": expected \"a b\" or [\"a\", \"b\"], got " + m.dump());
}

std::optional<std::string> optional_string(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_string()) throw error(std::string("model.") + key + " must be a string or null");
  return j[key].get<std::string>();
}

bool bool_field(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return false;
  if (!j[key].is_boolean()) throw error(std::string("model.") + key + " must be a bool");
  return j[key].get<bool>();
}

}  // namespace

// Words seen before, shared by every thread: read under a shared lock, emptied when full.
struct bpe_model::word_cache {
  std::shared_mutex mutex;
  std::unordered_map<std::string, std::vector<int32_t>> words;
};

bpe_model::bpe_model(std::unordered_map<std::string, int32_t> vocab,
                     const std::vector<std::pair<std::string, std::string>>& merges,
                     bpe_options options)
    : vocab_(std::move(vocab)), options_(std::move(options)), cache_(new word_cache) {
  // Real vocabularies number their tokens densely; the bound keeps a forged id from costing an
  // id -> token table of gigabytes.
  const int64_t id_limit = 2 * static_cast<int64_t>(vocab_.size()) + 65536;
  for (const auto& [token, id] : vocab_) {
    if (id < 0 || id >= id_limit)
      throw error("model.vocab: token " + in_quotes(token) + " has id " + std::to_string(id) +
                  ", outside [0, " + std::to_string(id_limit) + ") for " +
                  std::to_string(vocab_.size()) + " tokens");
    if (static_cast<size_t>(id) >= tokens_.size()) {
      tokens_.resize(static_cast<size_t>(id) + 1);
      has_id_.resize(static_cast<size_t>(id) + 1);
    }
    if (has_id_[id])
      throw error("model.vocab: id " + std::to_string(id) + " is used by both " +
                  in_quotes(tokens_[id]) + " and " + in_quotes(token));
    tokens_[id] = token;
    has_id_[id] = true;
  }
  const size_t prefix = options_.continuing_subword_prefix.size();
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    const std::string merged = a + (b.size() >= prefix ? b.substr(prefix) : b);
    const auto ia = vocab_.find(a), ib = vocab_.find(b), im = vocab_.find(merged);
    const char* missing = ia == vocab_.end()   ? "its first token"
                          : ib == vocab_.end() ? "its second token"
                          : im == vocab_.end() ? "the merged token"
                                               : nullptr;
    if (missing)
      throw error("model.merges[" + std::to_string(rank) + "] (" + in_quotes(a) + ", " +
                  in_quotes(b) + "): " + missing + " is not in the vocab");
    // A repeated pair keeps its last rank, as HF's map construction does.
    merges_[pair_key(ia->second, ib->second)] = {static_cast<int32_t>(rank), im->second};
  }
  if (options_.unk_token) {
    const auto it = vocab_.find(*options_.unk_token);
    if (it == vocab_.end())
      throw error("model.unk_token " + in_quotes(*options_.unk_token) + " is not in the vocab");
    unk_id_ = it->second;
  }
}

bpe_model::~bpe_model() = default;
bpe_model::bpe_model(bpe_model&&) noexcept = default;
bpe_model& bpe_model::operator=(bpe_model&&) noexcept = default;

bpe_model bpe_model::from_json(const nlohmann::json& model) {
  if (!model.is_object()) throw error("\"model\" must be an object");
  if (model.contains("type") && model["type"] != "BPE")
    throw error("unsupported model type " + model["type"].dump() + " (only BPE is supported)");
  if (!model.contains("vocab") || !model["vocab"].is_object())
    throw error("model.vocab must be an object of token -> id");
  if (!model.contains("merges") || !model["merges"].is_array())
    throw error("model.merges must be an array");
  if (model.contains("dropout") && model["dropout"].is_number() && model["dropout"] != 0)
    throw error("model.dropout is set: BPE dropout randomizes encoding and is not supported");
  std::unordered_map<std::string, int32_t> vocab;
  vocab.reserve(model["vocab"].size());
  for (const auto& [token, id] : model["vocab"].items()) {
    if (!id.is_number_integer())
      throw error("model.vocab: the id of " + in_quotes(token) + " is not an integer");
    const int64_t v = id.get<int64_t>();
    if (v < 0 || v >= max_token_id)
      throw error("model.vocab: token " + in_quotes(token) + " has id " + std::to_string(v) +
                  " (negative or too large)");
    vocab[token] = static_cast<int32_t>(v);
  }
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(model["merges"].size());
  for (size_t i = 0; i < model["merges"].size(); ++i)
    merges.push_back(parse_merge(model["merges"][i], i));
  bpe_options o;
  o.unk_token = optional_string(model, "unk_token");
  o.continuing_subword_prefix = optional_string(model, "continuing_subword_prefix").value_or("");
  o.end_of_word_suffix = optional_string(model, "end_of_word_suffix").value_or("");
  o.fuse_unk = bool_field(model, "fuse_unk");
  o.byte_fallback = bool_field(model, "byte_fallback");
  o.ignore_merges = bool_field(model, "ignore_merges");
  return bpe_model(std::move(vocab), merges, std::move(o));
}

const bpe_model::merge* bpe_model::find_merge(int32_t a, int32_t b) const {
  const auto it = merges_.find(pair_key(a, b));
  return it == merges_.end() ? nullptr : &it->second;
}

// One symbol per character (with the subword prefix / suffix where configured); characters the
// vocab lacks become <0xNN> bytes (byte_fallback), the unk token, or nothing, as in HF.
void bpe_model::initial_symbols(std::string_view word, std::vector<int32_t>& ids) const {
  bool last_was_unk = false;
  std::string key;
  for (size_t pos = 0; pos < word.size();) {
    const size_t len =
        std::min(utf8_length(static_cast<unsigned char>(word[pos])), word.size() - pos);
    const std::string_view ch = word.substr(pos, len);
    key.clear();
    if (pos > 0) key += options_.continuing_subword_prefix;
    key += ch;
    pos += len;
    if (pos == word.size()) key += options_.end_of_word_suffix;
    if (const auto id = token_to_id(key)) {
      ids.push_back(*id);
      last_was_unk = false;
      continue;
    }
    if (options_.byte_fallback) {
      std::vector<int32_t> bytes;
      for (const char c : ch) {
        char name[8];
        std::snprintf(name, sizeof(name), "<0x%02X>", static_cast<unsigned char>(c));
        if (const auto id = token_to_id(name)) bytes.push_back(*id);
      }
      if (bytes.size() == ch.size()) {
        ids.insert(ids.end(), bytes.begin(), bytes.end());
        last_was_unk = false;
        continue;
      }
    }
    if (unk_id_ && !(options_.fuse_unk && last_was_unk)) ids.push_back(*unk_id_);
    last_was_unk = unk_id_.has_value();
  }
}

// HF's Word::merge_all: a min-heap of (rank, position) over adjacent pairs; stale entries (the
// pair at that position changed) are dropped when popped.
void bpe_model::merge_all(std::vector<int32_t>& ids) const {
  struct entry {
    int32_t rank, pos, new_id;
    bool operator<(const entry& o) const {  // priority_queue pops the "largest": invert
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  const int32_t n = static_cast<int32_t>(ids.size());
  std::vector<int32_t> prev(n), next(n);
  std::priority_queue<entry> queue;
  for (int32_t i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
    if (i + 1 < n)
      if (const merge* m = find_merge(ids[i], ids[i + 1])) queue.push({m->rank, i, m->new_id});
  }
  while (!queue.empty()) {
    const entry top = queue.top();
    queue.pop();
    if (ids[top.pos] < 0 || next[top.pos] < 0) continue;
    const int32_t right = next[top.pos];
    const merge* m = find_merge(ids[top.pos], ids[right]);
    if (!m || m->new_id != top.new_id) continue;
    ids[top.pos] = top.new_id;
    ids[right] = -1;
    next[top.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = top.pos;
    if (prev[top.pos] >= 0)
      if (const merge* l = find_merge(ids[prev[top.pos]], top.new_id))
        queue.push({l->rank, prev[top.pos], l->new_id});
    if (next[top.pos] >= 0)
      if (const merge* r = find_merge(top.new_id, ids[next[top.pos]]))
        queue.push({r->rank, top.pos, r->new_id});
  }
  size_t kept = 0;
  for (const int32_t id : ids)
    if (id >= 0) ids[kept++] = id;
  ids.resize(kept);
}

void bpe_model::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges)
    if (const auto id = token_to_id(word)) {
      out.push_back(*id);
      return;
    }
  const bool cacheable = word.size() <= max_cached_word;
  std::string key;
  if (cacheable) {
    key.assign(word);
    std::shared_lock lock(cache_->mutex);
    const auto it = cache_->words.find(key);
    if (it != cache_->words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  initial_symbols(word, ids);
  merge_all(ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (!cacheable) return;
  std::unique_lock lock(cache_->mutex);
  if (cache_->words.size() >= cache_capacity) cache_->words.clear();
  cache_->words.emplace(std::move(key), std::move(ids));
}

std::optional<int32_t> bpe_model::token_to_id(std::string_view token) const {
  const auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* bpe_model::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || !has_id_[id]) return nullptr;
  return &tokens_[id];
}

}  // namespace sparserl::text
