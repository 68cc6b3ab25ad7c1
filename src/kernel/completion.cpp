#include "kernel/completion.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "kernel/abi.h"
#include "kernel/cuda_lexer.h"
#include "kernel/format_registry.h"
#include "sparse/quote_text.h"

namespace sparserl {

namespace {

// ---- lines and small text helpers ---------------------------------------------------------------

struct text_line {
  size_t begin = 0, end = 0;  // [begin, end) without the '\n'
  bool newline = false;       // a '\n' followed it
};

std::vector<text_line> split_lines(const std::string& text) {
  std::vector<text_line> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t nl = text.find('\n', begin);
    if (nl == std::string::npos) {
      lines.push_back({begin, text.size(), false});
      break;
    }
    lines.push_back({begin, nl, true});
    begin = nl + 1;
  }
  return lines;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Words separated by blanks or commas ("block=256, rows_per_block=8").
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (is_space(s[i]) || s[i] == ',')) ++i;
    const size_t begin = i;
    while (i < s.size() && !is_space(s[i]) && s[i] != ',') ++i;
    if (i > begin) out.push_back(s.substr(begin, i - begin));
  }
  return out;
}

// "key=value" with an integer value; "" on success, else the reason.
std::string parse_key_value(std::string_view word, std::string& key, int64_t& value) {
  const size_t eq = word.find('=');
  if (eq == std::string_view::npos || eq == 0) return quote_text(word) + " is not key=value";
  key = std::string(word.substr(0, eq));
  const std::string_view digits = word.substr(eq + 1);
  const char* first = digits.data();
  const char* last = digits.data() + digits.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  const bool numeric = !digits.empty() && end == last;
  if (ec == std::errc::result_out_of_range && end == last)
    return printable_text(word, 60) + " is out of range";
  if (!numeric || ec != std::errc()) return printable_text(word, 60) + " is not an integer";
  return "";
}

// ---- the FORMAT line ----------------------------------------------------------------------------

std::string known_formats() {
  std::string out;
  for (const format_info& f : format_registry())
    out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

std::string parse_format_line(std::string_view body, kernel_program& p) {
  const std::vector<std::string_view> w = words(body);
  if (w.empty()) return "no format name";
  const auto format = parse_format(std::string(w[0]));
  if (!format) return "unknown format " + quote_text(w[0]) + " (known: " + known_formats() + ")";
  p.format = *format;
  std::map<std::string, int64_t> params;
  for (size_t i = 1; i < w.size(); ++i) {
    std::string key;
    int64_t value = 0;
    if (std::string bad = parse_key_value(w[i], key, value); !bad.empty()) return bad;
    if (params.count(key)) return "parameter " + quote_text(key) + " given twice";
    params[key] = value;
  }
  if (std::string bad = normalize_format_params(p.format, params); !bad.empty()) return bad;
  p.format_params = std::move(params);
  return "";
}

// ---- LAUNCH lines
// ---------------------------------------------------------------------------------

struct launch_line {
  int line = 0;       // 1-based line in the completion
  std::string entry;  // "" = unnamed
  launch_spec spec;
};

// When `s` (trimmed) is a LAUNCH line, sets `entry` / `body` and returns true. A line that starts
// with LAUNCH but is malformed yields true and a non-empty `error`.
bool match_launch(std::string_view s, std::string& entry, std::string_view& body,
                  std::string& error) {
  constexpr std::string_view word = "LAUNCH";
  if (s.substr(0, word.size()) != word) return false;
  std::string_view rest = s.substr(word.size());
  if (rest.empty() || (rest.front() != ':' && !is_space(rest.front()))) return false;
  rest = trim(rest);
  if (!rest.empty() && rest.front() != ':') {
    size_t n = 0;
    while (n < rest.size() && is_ident_char(rest[n])) ++n;
    entry = std::string(rest.substr(0, n));
    rest = trim(rest.substr(n));
    if (entry.empty() || rest.empty() || rest.front() != ':') {
      error = "expected 'LAUNCH: ...' or 'LAUNCH <entry>: ...'";
      return true;
    }
  }
  if (rest.empty() || rest.front() != ':') {
    error = "expected 'LAUNCH: ...' or 'LAUNCH <entry>: ...'";
    return true;
  }
  body = rest.substr(1);
  return true;
}

std::string entry_list(const std::vector<entry_point>& entries) {
  std::string out;
  for (const entry_point& e : entries) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

// Assigns one launch_spec per entry point, in launch order; "" on success.
std::string resolve_launches(const std::vector<launch_line>& lines,
                             const std::vector<entry_point>& entries, sparse_op op,
                             format_kind format, std::vector<launch_spec>& out) {
  if (lines.empty()) return "no LAUNCH line (expected e.g. 'LAUNCH: block=256 rows_per_block=1')";
  const launch_line* unnamed = nullptr;
  std::map<std::string, const launch_line*> named;
  for (const launch_line& l : lines) {
    const std::string where = "LAUNCH line " + std::to_string(l.line) + ": ";
    if (l.entry.empty()) {
      if (unnamed)
        return where + "second unnamed LAUNCH line (the first is line " +
               std::to_string(unnamed->line) + "); name the entries: 'LAUNCH <entry>: ...'";
      unnamed = &l;
      continue;
    }
    const bool known = std::any_of(entries.begin(), entries.end(),
                                   [&](const entry_point& e) { return e.name == l.entry; });
    if (!known)
      return where + quote_text(l.entry) + " is not an entry point of " + format_name(format) +
             " " + op_name(op) + " (entry points: " + entry_list(entries) + ")";
    if (named.count(l.entry))
      return where + "second LAUNCH line for " + l.entry + " (the first is line " +
             std::to_string(named[l.entry]->line) + ")";
    named[l.entry] = &l;
  }
  out.clear();
  for (const entry_point& e : entries) {
    const launch_line* l = named.count(e.name) ? named[e.name] : unnamed;
    if (!l)
      return "no LAUNCH line for " + e.name + " (write 'LAUNCH " + e.name +
             ": ...' or one unnamed 'LAUNCH: ...' for all entry points)";
    const std::string where = "LAUNCH line " + std::to_string(l->line) + ": ";
    if (l->spec.nnz_per_block > 0 && !e.nnz_work)
      return where + "nnz_per_block does not apply to " + e.name +
             " (it is not split by nonzeros; use rows_per_block or grid)";
    if (l->spec.k_per_block > 0 && op == sparse_op::spmv)
      return where + "k_per_block applies to SpMM only";
    launch_spec spec = l->spec;
    spec.entry = e.name;
    out.push_back(spec);
  }
  return "";
}

// ---- the device source
// ----------------------------------------------------------------------------

bool is_fence(std::string_view trimmed) {
  return trimmed.substr(0, 3) == "```" || trimmed.substr(0, 3) == "~~~";
}

// A run of lines after the FORMAT line between fences, LAUNCH lines left out.
struct region {
  bool fenced = false;
  std::vector<size_t> lines;  // indices into the completion's lines
};

std::string region_text(const std::string& text, const std::vector<text_line>& lines,
                        const region& r) {
  std::string out;
  for (size_t i : r.lines) {
    out.append(text, lines[i].begin, lines[i].end - lines[i].begin);
    if (lines[i].newline) out += '\n';
  }
  return out;
}

bool defines_entry(const std::vector<token>& tokens, const std::string& name) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    const size_t at = match_entry_definition(tokens, i);
    if (at != no_token && tokens[at].text == name) return true;
  }
  return false;
}

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return is_space(c) || c == '\n'; });
}

// The region holding the code (docs/kernel-abi.md): the first fenced block that
// defines the first entry point; else the unfenced text right after the FORMAT line when it
// does; else the first non-blank fenced block; else the text after the FORMAT line.
const region* choose_region(const std::string& text, const std::vector<text_line>& lines,
                            const std::vector<region>& regions, const std::string& entry) {
  const region* first_fenced = nullptr;
  for (const region& r : regions) {
    if (!r.fenced) continue;
    const std::string body = region_text(text, lines, r);
    if (blank(body)) continue;
    if (!first_fenced) first_fenced = &r;
    if (body.find(entry) != std::string::npos && defines_entry(lex_cuda(body).tokens, entry))
      return &r;
  }
  if (!regions.empty() && !regions.front().fenced) {
    const std::string body = region_text(text, lines, regions.front());
    if (body.find(entry) != std::string::npos && defines_entry(lex_cuda(body).tokens, entry))
      return &regions.front();
  }
  if (first_fenced) return first_fenced;
  return regions.empty() ? nullptr : &regions.front();
}

// "" when the source looks complete, else why not.
std::string check_complete(const lex_result& lexed) {
  if (lexed.error_at_end) return "completion truncated inside the source (" + lexed.error + ")";
  int braces = 0, parens = 0;
  for (const token& t : lexed.tokens) {
    if (t.kind != token_kind::punct) continue;
    if (t.text == "{") ++braces;
    if (t.text == "}") --braces;
    if (t.text == "(") ++parens;
    if (t.text == ")") --parens;
  }
  if (braces > 0) return "completion truncated inside the source (unbalanced braces)";
  if (parens > 0) return "completion truncated inside the source (unbalanced parentheses)";
  return "";
}

// ---- the whole completion
// -------------------------------------------------------------------------

parse_result fail(std::string why) { return {std::nullopt, std::move(why)}; }

parse_result parse(const std::string& text, sparse_op op) {
  const std::vector<text_line> lines = split_lines(text);
  auto view = [&](size_t i) {
    return trim(std::string_view(text).substr(lines[i].begin, lines[i].end - lines[i].begin));
  };
  // Fence state before each line, so a FORMAT line inside an open fence is known as such.
  size_t format_at = lines.size();
  bool in_fence = false, format_fenced = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view s = view(i);
    if (s.substr(0, 7) == "FORMAT:") {
      format_at = i;
      format_fenced = in_fence;
      break;
    }
    if (is_fence(s)) in_fence = !in_fence;
  }
  if (format_at == lines.size()) return fail("no FORMAT line");

  kernel_program program;
  const std::string format_where = "FORMAT line " + std::to_string(format_at + 1) + ": ";
  if (std::string bad = parse_format_line(view(format_at).substr(7), program); !bad.empty())
    return fail(format_where + bad);

  std::vector<launch_line> launches;
  std::vector<region> regions(1);
  regions.front().fenced = format_fenced;
  for (size_t i = format_at + 1; i < lines.size(); ++i) {
    const std::string_view s = view(i);
    if (is_fence(s)) {
      regions.push_back({!regions.back().fenced, {}});
      continue;
    }
    std::string entry, error;
    std::string_view body;
    if (match_launch(s, entry, body, error)) {
      const std::string where = "LAUNCH line " + std::to_string(i + 1) + ": ";
      if (!error.empty()) return fail(where + error);
      launch_line l;
      l.line = static_cast<int>(i + 1);
      l.entry = entry;
      if (std::string bad = parse_launch_line(std::string(body), l.spec); !bad.empty())
        return fail(where + bad);
      launches.push_back(std::move(l));
      continue;
    }
    regions.back().lines.push_back(i);
  }

  const std::vector<entry_point> entries = entry_points(op, program.format);
  const region* code = choose_region(text, lines, regions, entries.front().name);
  program.source = code ? region_text(text, lines, *code) : std::string();
  if (blank(program.source)) return fail("no device source after the FORMAT line");
  if (const size_t nul = program.source.find('\0'); nul != std::string::npos) {
    const size_t line =
        code->lines[std::count(program.source.begin(), program.source.begin() + nul, '\n')];
    return fail("NUL byte in the source at line " + std::to_string(line + 1));
  }
  const lex_result lexed = lex_cuda(program.source);
  if (std::string bad = check_complete(lexed); !bad.empty()) return fail(bad);
  for (const entry_point& e : entries)
    if (!defines_entry(lexed.tokens, e.name))
      return fail("missing entry point " + e.name + " (expected '" +
                  entry_signature(op, program.format, e.name) + "')");
  if (std::string bad = resolve_launches(launches, entries, op, program.format, program.launches);
      !bad.empty())
    return fail(bad);
  return {std::move(program), ""};
}

}  // namespace

std::string parse_launch_line(const std::string& line, launch_spec& out) {
  launch_spec spec;
  spec.entry = out.entry;
  std::map<std::string, bool> seen;
  for (std::string_view w : words(line)) {
    std::string key;
    int64_t value = 0;
    if (std::string bad = parse_key_value(w, key, value); !bad.empty()) return bad;
    if (seen[key]) return key + " given twice";
    seen[key] = true;
    auto positive = [&](int64_t& field) -> std::string {
      if (value < 1) return key + "=" + std::to_string(value) + " must be positive";
      field = value;
      return "";
    };
    std::string bad;
    if (key == "block") {
      if (value < 1 || value > 1024)
        return "block=" + std::to_string(value) + " must be in 1..1024";
      spec.block = static_cast<int32_t>(value);
    } else if (key == "rows_per_block") {
      bad = positive(spec.rows_per_block);
    } else if (key == "nnz_per_block") {
      bad = positive(spec.nnz_per_block);
    } else if (key == "grid") {
      bad = positive(spec.grid);
    } else if (key == "k_per_block") {
      bad = positive(spec.k_per_block);
    } else if (key == "shared") {
      if (value < 0 || value > INT32_MAX)
        return "shared=" + std::to_string(value) + " must be in 0..2147483647 (bytes)";
      spec.shared_bytes = static_cast<int32_t>(value);
    } else {
      return "unknown key " + quote_text(key) +
             " (known: block, rows_per_block, nnz_per_block, grid, k_per_block, shared)";
    }
    if (!bad.empty()) return bad;
  }
  if (spec.block == 0) return "no block=<threads per block>";
  const int work = (spec.rows_per_block > 0) + (spec.nnz_per_block > 0) + (spec.grid > 0);
  if (work != 1) {
    std::string got;
    for (const char* k : {"rows_per_block", "nnz_per_block", "grid"})
      if (seen[k]) got += (got.empty() ? "" : " and ") + std::string(k);
    return "give exactly one of rows_per_block, nnz_per_block, grid (got " +
           (got.empty() ? std::string("none") : got) + ")";
  }
  out = spec;
  return "";
}

parse_result parse_completion(const std::string& text, sparse_op op) {
  try {
    return parse(text, op);
  } catch (const std::exception& e) {
    return fail(std::string("completion could not be parsed: ") + e.what());
  } catch (...) {
    return fail("completion could not be parsed");
  }
}

}  // namespace sparserl
