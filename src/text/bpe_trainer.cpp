#include "text/bpe_trainer.h"

#include <algorithm>
#include <queue>
#include <set>

#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "text/byte_level.h"
#include "text/tokenizer_json.h"
#include "text/utf8.h"

namespace sparserl::text {

namespace fs = std::filesystem;

namespace {

uint64_t pair_key(int32_t a, int32_t b) {
  return static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32 | static_cast<uint32_t>(b);
}
int32_t first_of(uint64_t key) { return static_cast<int32_t>(key >> 32); }
int32_t second_of(uint64_t key) { return static_cast<int32_t>(key & 0xFFFFFFFFu); }

// Heap order of HF's BpeTrainer: the highest count first, then the smaller pair of ids.
struct candidate {
  int64_t count;
  uint64_t pair;
  bool operator<(const candidate& o) const {
    return count != o.count ? count < o.count : pair > o.pair;
  }
};

// The state of one training run: words as symbol ids, pair counts, where each pair occurs.
struct merge_state {
  std::vector<std::string> vocab;
  std::unordered_map<std::string, int32_t> ids;
  std::vector<std::vector<int32_t>> words;
  std::vector<int64_t> counts;
  std::unordered_map<uint64_t, int64_t> pair_counts;
  std::unordered_map<uint64_t, std::vector<int32_t>> where;
  std::priority_queue<candidate> queue;

  int32_t intern(const std::string& token) {
    const auto [it, inserted] = ids.emplace(token, static_cast<int32_t>(vocab.size()));
    if (inserted) vocab.push_back(token);
    return it->second;
  }

  // Replaces every (a, b) in word w by `merged`, recording how neighbouring pair counts change.
  void merge_word(int32_t w, int32_t a, int32_t b, int32_t merged,
                  std::unordered_map<uint64_t, int64_t>& delta) {
    std::vector<int32_t>& s = words[w];
    const int64_t c = counts[w];
    for (size_t j = 0; j + 1 < s.size(); ++j) {
      if (s[j] != a || s[j + 1] != b) continue;
      if (j > 0) {
        delta[pair_key(s[j - 1], a)] -= c;
        delta[pair_key(s[j - 1], merged)] += c;
        where[pair_key(s[j - 1], merged)].push_back(w);
      }
      if (j + 2 < s.size()) {
        delta[pair_key(b, s[j + 2])] -= c;
        delta[pair_key(merged, s[j + 2])] += c;
        where[pair_key(merged, s[j + 2])].push_back(w);
      }
      s[j] = merged;
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(j) + 1);
    }
  }

  void apply_merge(uint64_t pair, int32_t merged, std::vector<int32_t>& visited, int32_t round) {
    std::unordered_map<uint64_t, int64_t> delta;
    std::vector<int32_t> sites = std::move(where[pair]);
    where.erase(pair);
    for (const int32_t w : sites) {
      if (visited[w] == round) continue;  // listed twice
      visited[w] = round;
      merge_word(w, first_of(pair), second_of(pair), merged, delta);
    }
    pair_counts.erase(pair);
    for (const auto& [p, d] : delta) {
      if (p == pair || d == 0) continue;
      int64_t& count = pair_counts[p];
      count += d;
      if (d > 0) queue.push({count, p});  // decreases are caught lazily when popped
      if (count <= 0) pair_counts.erase(p);
    }
  }
};

bool hidden(const fs::path& relative) {
  for (const fs::path& part : relative)
    if (part.string().size() > 1 && part.string()[0] == '.') return true;
  return false;
}

bool looks_binary(const std::string& bytes) { return bytes.find('\0') != std::string::npos; }

}  // namespace

bpe_trainer::bpe_trainer(bpe_trainer_options options)
    : options_(std::move(options)),
      norm_(options_.nfc ? std::vector<normal_form>{normal_form::nfc} : std::vector<normal_form>{}),
      pre_(pre_tokenizer::split_then_byte_level(options_.pattern)) {
  std::set<std::string> unique;
  std::vector<added_token> specials;
  for (const std::string& s : options_.special_tokens) {
    if (s.empty() || find_invalid_utf8(s) != std::string::npos)
      throw error("bpe_trainer: special tokens must be non-empty UTF-8");
    if (!unique.insert(s).second) throw error("bpe_trainer: special token '" + s + "' repeated");
    added_token t;
    t.id = static_cast<int32_t>(specials.size());  // placeholder: only matching matters here
    t.content = s;
    t.special = true;
    specials.push_back(std::move(t));
  }
  if (!options_.eos_token.empty() && !unique.count(options_.eos_token))
    throw error("bpe_trainer: eos token '" + options_.eos_token + "' is not a special token");
  const int64_t floor = 256 + static_cast<int64_t>(specials.size());
  if (options_.vocab_size < floor)
    throw error("bpe_trainer: vocab size " + std::to_string(options_.vocab_size) +
                " is below the " + std::to_string(floor) + " that bytes and special tokens need");
  specials_ = added_vocabulary(std::move(specials), norm_);
}

void bpe_trainer::add_text(std::string_view text) {
  const std::string valid =
      find_invalid_utf8(text) == std::string::npos ? std::string(text) : to_valid_utf8(text);
  std::vector<text_segment> segments;
  std::vector<std::string> words;
  specials_.split(valid, false, false, segments);
  for (const text_segment& s : segments) {
    if (s.id >= 0) continue;  // special tokens are not learned from
    pre_.split(norm_.apply(std::string_view(valid).substr(s.begin, s.end - s.begin)), words);
    for (std::string& w : words) ++word_counts_[std::move(w)];
  }
}

corpus_stats bpe_trainer::add_directory(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw error(dir.string() + ": not a directory (the corpus)");
  std::vector<fs::path> paths;
  for (auto it =
           fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (hidden(fs::relative(it->path(), dir))) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) paths.push_back(it->path());
  }
  if (ec) throw error(dir.string() + ": cannot list the corpus: " + ec.message());
  std::sort(paths.begin(), paths.end());
  corpus_stats stats;
  for (const fs::path& p : paths) {
    if (fs::file_size(p, ec) > options_.max_file_bytes) {
      ++stats.skipped_files;
      continue;
    }
    const std::string bytes = read_file_decompressed(p.string(), options_.max_file_bytes);
    if (looks_binary(bytes)) {
      ++stats.skipped_files;
      continue;
    }
    add_text(bytes);
    ++stats.files;
    stats.bytes += bytes.size();
  }
  return stats;
}

trained_bpe bpe_trainer::train() const {
  if (word_counts_.empty()) throw error("bpe_trainer: the corpus has no text to learn from");
  merge_state st;
  // The alphabet: all 256 byte characters in code point order (HF's initial alphabet), so any
  // byte can be encoded whether or not the corpus had it.
  std::vector<std::string> alphabet;
  for (int b = 0; b < 256; ++b) alphabet.push_back(byte_char(static_cast<unsigned char>(b)));
  std::sort(alphabet.begin(), alphabet.end(), [](const std::string& x, const std::string& y) {
    return x.size() != y.size() ? x.size() < y.size() : x < y;  // UTF-8 order = code point order
  });
  for (const std::string& c : alphabet) st.intern(c);

  for (const auto& [word, count] : word_counts_) {
    std::vector<int32_t> symbols;
    for (size_t i = 0; i < word.size();) {
      const size_t len = utf8_length(static_cast<unsigned char>(word[i]));
      symbols.push_back(st.ids.at(word.substr(i, len)));
      i += len;
    }
    const auto w = static_cast<int32_t>(st.words.size());
    for (size_t j = 0; j + 1 < symbols.size(); ++j) {
      const uint64_t p = pair_key(symbols[j], symbols[j + 1]);
      st.pair_counts[p] += count;
      st.where[p].push_back(w);
    }
    st.words.push_back(std::move(symbols));
    st.counts.push_back(count);
  }
  for (const auto& [p, c] : st.pair_counts) st.queue.push({c, p});

  trained_bpe out;
  const size_t target = static_cast<size_t>(options_.vocab_size) - options_.special_tokens.size();
  const int64_t min_count = std::max<int64_t>(options_.min_frequency, 1);
  std::vector<int32_t> visited(st.words.size(), -1);
  for (int32_t round = 0; st.vocab.size() < target && !st.queue.empty();) {
    const candidate top = st.queue.top();
    st.queue.pop();
    const auto it = st.pair_counts.find(top.pair);
    const int64_t current = it == st.pair_counts.end() ? 0 : it->second;
    if (current != top.count) {  // stale: counts fell since it was pushed
      if (current > 0) st.queue.push({current, top.pair});
      continue;
    }
    if (current < min_count) break;
    const std::string& a = st.vocab[first_of(top.pair)];
    const std::string& b = st.vocab[second_of(top.pair)];
    out.merges.emplace_back(a, b);
    const int32_t merged = st.intern(a + b);
    st.apply_merge(top.pair, merged, visited, round++);
  }
  out.vocab = std::move(st.vocab);
  return out;
}

void bpe_trainer::save(const trained_bpe& bpe, const fs::path& dir) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw error(dir.string() + ": cannot create the output directory: " + ec.message());
  const tokenizer_json_parts parts{&bpe.vocab, &bpe.merges, &options_.special_tokens,
                                   &norm_,     &pre_,       options_.eos_token};
  // The config first: a directory with a tokenizer.json is then always complete.
  write_json_atomically(dir / "tokenizer_config.json", make_tokenizer_config(parts));
  write_json_atomically(dir / "tokenizer.json", make_tokenizer_json(parts));
}

}  // namespace sparserl::text
