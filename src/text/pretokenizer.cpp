#include "text/pretokenizer.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "sparse/error.h"
#include "text/byte_level.h"

namespace sparserl::text {

const char* const qwen2_split_pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|)"
    R"( ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const gpt2_split_pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

constexpr std::pair<const char*, split_behavior> behavior_names[] = {
    {"Removed", split_behavior::removed},
    {"Isolated", split_behavior::isolated},
    {"MergedWithPrevious", split_behavior::merged_with_previous},
    {"MergedWithNext", split_behavior::merged_with_next},
    {"Contiguous", split_behavior::contiguous},
};

struct span {
  size_t begin, end;
  bool is_match;
};

split_behavior parse_behavior(const nlohmann::json& j) {
  if (j.is_string())
    for (const auto& [name, b] : behavior_names)
      if (j.get<std::string>() == name) return b;
  throw error("pre_tokenizer Split: unknown behavior " + j.dump() +
              " (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
}

// The text cut at the matches: (begin, end, is_match) covering it all, as HF's find_matches.
std::vector<span> cut(const regex& re, std::string_view text, bool invert) {
  thread_local std::vector<match_span> found;
  found.clear();
  re.find_all(text, found);
  std::vector<span> spans;
  size_t prev = 0;
  for (const match_span& m : found) {
    if (m.begin != prev) spans.push_back({prev, m.begin, invert});
    spans.push_back({m.begin, m.end, !invert});
    prev = m.end;
  }
  if (prev != text.size()) spans.push_back({prev, text.size(), invert});
  return spans;
}

// HF's SplitDelimiterBehavior, applied to the cut; the result's is_match is meaningless.
std::vector<span> apply_behavior(std::vector<span> spans, split_behavior b) {
  std::vector<span> out;
  bool previous_match = false;
  switch (b) {
    case split_behavior::isolated:
      return spans;
    case split_behavior::removed:
      for (const span& s : spans)
        if (!s.is_match) out.push_back(s);
      return out;
    case split_behavior::merged_with_previous:
      for (const span& s : spans) {
        if (s.is_match && !previous_match && !out.empty())
          out.back().end = s.end;
        else
          out.push_back(s);
        previous_match = s.is_match;
      }
      return out;
    case split_behavior::merged_with_next:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty())
          out.back().begin = it->begin;
        else
          out.push_back(*it);
        previous_match = it->is_match;
      }
      return {out.rbegin(), out.rend()};
    case split_behavior::contiguous:
      for (const span& s : spans) {
        if (s.is_match == previous_match && !out.empty())
          out.back().end = s.end;
        else
          out.push_back(s);
        previous_match = s.is_match;
      }
      return out;
  }
  return spans;
}

nlohmann::json byte_level_json(bool add_prefix_space, bool use_regex) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", add_prefix_space},
          {"trim_offsets", false},
          {"use_regex", use_regex}};
}

bool bool_field(const nlohmann::json& j, const char* key, bool fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean())
    throw error(std::string("pre_tokenizer: \"") + key + "\" must be a bool");
  return j[key].get<bool>();
}

}  // namespace

void pre_tokenizer::parse_into(const nlohmann::json& j, std::vector<step>& steps) {
  if (j.is_null()) return;
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw error("pre_tokenizer: expected an object with a string \"type\"");
  const std::string type = j["type"];
  if (type == "Sequence") {
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
      throw error("pre_tokenizer Sequence: \"pretokenizers\" must be an array");
    for (const auto& inner : j["pretokenizers"]) parse_into(inner, steps);
  } else if (type == "Split") {
    const nlohmann::json& p = j.contains("pattern") ? j["pattern"] : nlohmann::json();
    const bool literal = p.is_object() && p.contains("String") && p["String"].is_string();
    if (!literal && !(p.is_object() && p.contains("Regex") && p["Regex"].is_string()))
      throw error("pre_tokenizer Split: \"pattern\" must be {\"Regex\": ...} or {\"String\": ...}");
    const std::string text = literal ? p["String"] : p["Regex"];
    step s{step::split, regex(text, literal)};
    s.literal = literal;
    s.behavior = parse_behavior(j.contains("behavior") ? j["behavior"] : nlohmann::json());
    s.invert = bool_field(j, "invert", false);
    steps.push_back(std::move(s));
  } else if (type == "ByteLevel") {
    step s{step::byte_level, regex(gpt2_split_pattern)};
    s.add_prefix_space = bool_field(j, "add_prefix_space", true);
    s.use_regex = bool_field(j, "use_regex", true);
    steps.push_back(std::move(s));
  } else {
    throw error("pre_tokenizer: unsupported type '" + type +
                "' (supported: Split, ByteLevel, Sequence, null)");
  }
}

pre_tokenizer pre_tokenizer::from_json(const nlohmann::json& j) {
  pre_tokenizer p;
  parse_into(j, p.steps_);
  return p;
}

pre_tokenizer pre_tokenizer::split_then_byte_level(std::string_view pattern) {
  nlohmann::json split = {{"type", "Split"},
                          {"pattern", {{"Regex", std::string(pattern)}}},
                          {"behavior", "Isolated"},
                          {"invert", false}};
  return from_json(
      {{"type", "Sequence"}, {"pretokenizers", {split, byte_level_json(false, false)}}});
}

nlohmann::json pre_tokenizer::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const step& s : steps_) {
    if (s.kind == step::byte_level) {
      list.push_back(byte_level_json(s.add_prefix_space, s.use_regex));
      continue;
    }
    std::string behavior;
    for (const auto& [name, b] : behavior_names)
      if (b == s.behavior) behavior = name;
    list.push_back({{"type", "Split"},
                    {"pattern", {{s.literal ? "String" : "Regex", s.pattern.pattern()}}},
                    {"behavior", behavior},
                    {"invert", s.invert}});
  }
  if (list.empty()) return nullptr;
  if (list.size() == 1) return list[0];
  return {{"type", "Sequence"}, {"pretokenizers", list}};
}

void pre_tokenizer::run_split(const step& s, std::string_view piece,
                              std::vector<std::string>& out) {
  for (const span& sp : apply_behavior(cut(s.pattern, piece, s.invert), s.behavior))
    if (sp.end > sp.begin) out.emplace_back(piece.substr(sp.begin, sp.end - sp.begin));
}

void pre_tokenizer::run_byte_level(const step& s, std::string_view piece,
                                   std::vector<std::string>& out) {
  std::string prefixed;
  if (s.add_prefix_space && piece.compare(0, 1, " ") != 0) {
    prefixed = " " + std::string(piece);
    piece = prefixed;
  }
  const std::string_view text = piece;
  thread_local std::vector<match_span> found;
  found.clear();
  if (s.use_regex) {
    for (const span& sp : cut(s.pattern, text, false)) found.push_back({sp.begin, sp.end});
  } else {
    found.push_back({0, text.size()});
  }
  for (const match_span& m : found) {
    if (m.end == m.begin) continue;
    std::string mapped;
    mapped.reserve((m.end - m.begin) * 2);
    append_byte_chars(text.substr(m.begin, m.end - m.begin), mapped);
    out.push_back(std::move(mapped));
  }
}

void pre_tokenizer::split(std::string_view text, std::vector<std::string>& words) const {
  words.clear();
  if (text.empty()) return;
  if (steps_.empty()) {
    words.emplace_back(text);
    return;
  }
  auto run = [](const step& s, std::string_view piece, std::vector<std::string>& out) {
    if (s.kind == step::split)
      run_split(s, piece, out);
    else
      run_byte_level(s, piece, out);
  };
  run(steps_[0], text, words);  // the first step reads the text in place
  std::vector<std::string> next;
  for (size_t i = 1; i < steps_.size(); ++i) {
    next.clear();
    for (const std::string& piece : words) run(steps_[i], piece, next);
    words.swap(next);
  }
}

}  // namespace sparserl::text
