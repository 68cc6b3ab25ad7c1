#include "sparse/matrix_market.h"

#include <omp.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "sparse/pattern_values.h"

namespace sparserl {

namespace {

enum class mtx_field { real, integer, pattern };
enum class mtx_symmetry { general, symmetric, skew_symmetric };

struct mtx_header {
  mtx_field field = mtx_field::real;
  mtx_symmetry symmetry = mtx_symmetry::general;
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t size_line = 0;   // 1-based line number of "rows cols nnz"
  size_t body_offset = 0;  // first byte after the size line
};

constexpr int64_t max_index = std::numeric_limits<int32_t>::max();

[[noreturn]] void fail_at(const std::string& name, int64_t line, const std::string& why) {
  throw error(name + ":" + std::to_string(line) + ": " + why);
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool ends_token(const char* p, const char* end) { return p == end || is_blank(*p) || *p == '\n'; }
const char* skip_blanks(const char* p, const char* end) {
  while (p < end && is_blank(*p)) ++p;
  return p;
}

// The offending token, quoted and cut short so that a binary file cannot flood the message.
std::string quoted_token(const char* p, const char* end) {
  const char* q = p;
  while (!ends_token(q, end) && q - p < 40) ++q;
  return "'" + std::string(p, q) + (ends_token(q, end) ? "'" : "...'");
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::vector<std::string_view> split_blanks(std::string_view line) {
  std::vector<std::string_view> tokens;
  const char* p = line.data();
  const char* end = p + line.size();
  while ((p = skip_blanks(p, end)) < end) {
    const char* q = p;
    while (q < end && !is_blank(*q)) ++q;
    tokens.emplace_back(p, static_cast<size_t>(q - p));
    p = q;
  }
  return tokens;
}

// Hands out the header's lines one at a time (without the '\n'), counting them.
struct line_cursor {
  const char* data;
  size_t size;
  size_t pos = 0;
  int64_t line = 0;  // 1-based number of the line last returned

  bool next(std::string_view& out) {
    if (pos >= size) return false;
    const char* start = data + pos;
    const auto* nl = static_cast<const char*>(std::memchr(start, '\n', size - pos));
    const size_t len = nl ? static_cast<size_t>(nl - start) : size - pos;
    pos += len + (nl ? 1 : 0);
    ++line;
    out = std::string_view(start, len);
    return true;
  }
};

void parse_banner(std::string_view line, const std::string& name, mtx_header& h) {
  const auto tokens = split_blanks(line);
  const char* expected = "expected '%%MatrixMarket matrix coordinate <field> <symmetry>'";
  if (tokens.empty() || lower(tokens[0]) != "%%matrixmarket")
    fail_at(name, 1, std::string("missing %%MatrixMarket banner: ") + expected);
  if (tokens.size() < 5) fail_at(name, 1, std::string("incomplete banner: ") + expected);
  const std::string object = lower(tokens[1]), format = lower(tokens[2]);
  const std::string field = lower(tokens[3]), symmetry = lower(tokens[4]);
  if (object != "matrix")
    fail_at(name, 1, "object '" + std::string(tokens[1]) + "' is not supported (only 'matrix')");
  if (format == "array") fail_at(name, 1, "array format is not supported (only coordinate)");
  if (format != "coordinate")
    fail_at(name, 1, "unknown format '" + std::string(tokens[2]) + "' (expected coordinate)");
  if (field == "real") {
    h.field = mtx_field::real;
  } else if (field == "integer") {
    h.field = mtx_field::integer;
  } else if (field == "pattern") {
    h.field = mtx_field::pattern;
  } else if (field == "complex") {
    fail_at(name, 1, "complex field is not supported (only real, integer, pattern)");
  } else {
    fail_at(name, 1,
            "unknown field '" + std::string(tokens[3]) + "' (expected real, integer or pattern)");
  }
  if (symmetry == "general") {
    h.symmetry = mtx_symmetry::general;
  } else if (symmetry == "symmetric") {
    h.symmetry = mtx_symmetry::symmetric;
  } else if (symmetry == "skew-symmetric") {
    h.symmetry = mtx_symmetry::skew_symmetric;
  } else if (symmetry == "hermitian") {
    fail_at(name, 1,
            "hermitian symmetry is not supported (only general, symmetric, skew-symmetric)");
  } else {
    fail_at(name, 1,
            "unknown symmetry '" + std::string(tokens[4]) +
                "' (expected general, symmetric or skew-symmetric)");
  }
  if (tokens.size() > 5)
    fail_at(name, 1, "unexpected '" + std::string(tokens[5]) + "' after the banner's symmetry");
}

int64_t parse_size_field(std::string_view token, const char* what, const std::string& name,
                         int64_t line) {
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  const std::string shown = "'" + std::string(token) + "'";
  if (ec == std::errc::invalid_argument || p != token.data() + token.size())
    fail_at(name, line,
            std::string("size line 'rows cols nnz': ") + what + " " + shown + " is not an integer");
  if (ec == std::errc::result_out_of_range || v > max_index)
    fail_at(name, line, std::string(what) + " " + shown + " is too large (must be < 2^31)");
  if (v < 0) fail_at(name, line, std::string(what) + " " + shown + " is negative");
  return v;
}

void parse_size_line(std::string_view line, const std::string& name, int64_t line_no,
                     mtx_header& h) {
  const auto tokens = split_blanks(line);
  if (tokens.size() < 3)
    fail_at(
        name, line_no,
        "size line must be 'rows cols nnz', found " + std::to_string(tokens.size()) + " number(s)");
  if (tokens.size() > 3)
    fail_at(name, line_no,
            "unexpected '" + std::string(tokens[3]) + "' after 'rows cols nnz' on the size line");
  h.rows = parse_size_field(tokens[0], "row count", name, line_no);
  h.cols = parse_size_field(tokens[1], "column count", name, line_no);
  h.nnz = parse_size_field(tokens[2], "entry count", name, line_no);
  h.size_line = line_no;
  if (h.symmetry != mtx_symmetry::general && h.rows != h.cols)
    fail_at(name, line_no,
            "a symmetric or skew-symmetric matrix must be square, not " + std::to_string(h.rows) +
                " x " + std::to_string(h.cols));
}

mtx_header parse_header(const char* data, size_t size, const std::string& name) {
  line_cursor cursor{data, size};
  std::string_view line;
  if (!cursor.next(line)) fail_at(name, 1, "empty file: missing %%MatrixMarket banner");
  mtx_header h;
  parse_banner(line, name, h);
  while (cursor.next(line)) {
    const char* p = skip_blanks(line.data(), line.data() + line.size());
    if (p == line.data() + line.size() || *p == '%') continue;  // blank or comment
    parse_size_line(line, name, cursor.line, h);
    h.body_offset = cursor.pos;
    return h;
  }
  fail_at(name, cursor.line, "file ends before the size line 'rows cols nnz'");
}

// Bytes the declared size needs once read: triplets plus the CSR built from them.
int64_t declared_bytes(const mtx_header& h) {
  const int64_t entries = h.nnz * (h.symmetry == mtx_symmetry::general ? 1 : 2);
  const int64_t per_entry = sizeof(triplet) + sizeof(int32_t) + sizeof(float);
  return entries * per_entry + (h.rows + 1) * static_cast<int64_t>(sizeof(int32_t)) * 2;
}

// A body error; `line` counts from the first line of the chunk being scanned. Never thrown
// across an OpenMP region: scan() catches it into chunk_scan.
struct local_error {
  int64_t line = 0;
  std::string why;
  bool too_many = false;  // an entry line beyond the scan's limit
};

struct chunk_scan {
  std::vector<triplet> entries;
  int64_t entry_lines = 0;  // entry lines accepted (before mirroring)
  int64_t lines = 0;        // '\n's passed; the whole chunk's count unless failed
  bool failed = false;
  bool out_of_memory = false;
  local_error error;
};

// The hot loop: one pass over line-aligned bytes, std::from_chars for every number.
class body_scanner {
 public:
  body_scanner(const mtx_header& h, const mtx_read_options& options) : h_(h), options_(options) {}

  // Scans [p, end), which starts at a line start, accepting at most `limit` entry lines.
  void scan(const char* p, const char* end, int64_t limit, chunk_scan& out) const {
    try {
      scan_lines(p, end, limit, out);
    } catch (local_error& e) {
      out.failed = true;
      out.error = std::move(e);
    } catch (const std::bad_alloc&) {
      out.failed = out.out_of_memory = true;
    }
  }

 private:
  void scan_lines(const char* p, const char* end, int64_t limit, chunk_scan& out) const {
    const bool has_value = h_.field != mtx_field::pattern;
    int64_t line = 0;
    while (p < end) {
      p = skip_blanks(p, end);
      if (p == end) break;
      if (*p == '\n' || *p == '%') {  // blank line or comment
        const auto* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
        if (!nl) break;
        p = nl + 1;
        out.lines = ++line;
        continue;
      }
      if (out.entry_lines == limit) throw local_error{line, "more entries than declared", true};
      int32_t row, col;
      float value = 1.0f;
      p = skip_blanks(read_index(p, end, line, "row", h_.rows, row), end);
      if (p == end || *p == '\n') throw local_error{line, "missing column index"};
      p = skip_blanks(read_index(p, end, line, "column", h_.cols, col), end);
      if (has_value) {
        if (p == end || *p == '\n') throw local_error{line, "missing value after the indices"};
        p = skip_blanks(read_value(p, end, line, value), end);
      }
      if (p < end && *p != '\n')
        throw local_error{line, "unexpected " + quoted_token(p, end) + " after the " +
                                    (has_value ? "value" : "column index (field is pattern)")};
      emit(row, col, value, line, out.entries);
      ++out.entry_lines;
      if (p < end) ++p;
      out.lines = ++line;
    }
  }

  void emit(int32_t row, int32_t col, float value, int64_t line, std::vector<triplet>& out) const {
    if (h_.symmetry == mtx_symmetry::skew_symmetric && row == col)
      throw local_error{line, "diagonal entry (" + std::to_string(row + 1) + ", " +
                                  std::to_string(col + 1) + ") in a skew-symmetric matrix"};
    out.push_back({row, col, value});
    if (h_.symmetry == mtx_symmetry::general || row == col) return;
    out.push_back({col, row, h_.symmetry == mtx_symmetry::skew_symmetric ? -value : value});
  }

  static const char* read_index(const char* p, const char* end, int64_t line, const char* what,
                                int64_t dim, int32_t& out) {
    int32_t v = 0;
    const auto [q, ec] = std::from_chars(p, end, v);
    if (ec == std::errc::invalid_argument || !ends_token(q, end))
      throw local_error{
          line, std::string(what) + " index " + quoted_token(p, end) + " is not an integer"};
    if (ec == std::errc::result_out_of_range || v < 1 || v > dim)
      throw local_error{line, std::string(what) + " index " + quoted_token(p, end) +
                                  " is out of range 1.." + std::to_string(dim) +
                                  (ec == std::errc() && v == 0 ? " (indices are 1-based)" : "")};
    out = static_cast<int32_t>(v - 1);
    return q;
  }

  const char* read_value(const char* p, const char* end, int64_t line, float& out) const {
    const char* token = p;
    if (*p == '+' && p + 1 < end && p[1] != '-' && p[1] != '+') ++p;  // from_chars refuses '+'
    if (h_.field == mtx_field::integer) {
      int64_t v = 0;
      const auto [q, ec] = std::from_chars(p, end, v);
      if (ec != std::errc() || !ends_token(q, end))
        throw local_error{line, "value " + quoted_token(token, end) +
                                    " is not a 64-bit integer (field is integer)"};
      out = static_cast<float>(v);
      return q;
    }
    const auto [q, ec] = std::from_chars(p, end, out);  // straight to float: no double rounding
    if (ec == std::errc::invalid_argument || !ends_token(q, end))
      throw local_error{line, "value " + quoted_token(token, end) + " is not a number"};
    if (ec == std::errc::result_out_of_range) out = beyond_float_range(p, q);
    if (!std::isfinite(out) && !options_.allow_nonfinite)
      throw local_error{line, "value " + quoted_token(token, end) +
                                  " is not finite (allowed only with allow_nonfinite)"};
    return q;
  }

  // from_chars reports values that round to 0 and values that overflow float alike.
  static float beyond_float_range(const char* p, const char* q) {
    const bool negative = *p == '-';
    double d = 0;
    const bool tiny =
        std::from_chars(p, q, d).ec == std::errc() ? std::fabs(d) < 1 : below_one(p + negative, q);
    const float magnitude = tiny ? 0.0f : std::numeric_limits<float>::infinity();
    return negative ? -magnitude : magnitude;
  }

  // For a decimal beyond double's range: is its magnitude below 1? Decided from the position of
  // the first nonzero digit against the point, shifted by the exponent (|log10| > 300 here).
  static bool below_one(const char* p, const char* q) {
    const char* e = std::find_if(p, q, [](char c) { return c == 'e' || c == 'E'; });
    const char* point = std::find(p, e, '.');
    const char* lead = std::find_if(p, e, [](char c) { return c >= '1' && c <= '9'; });
    int64_t exponent = 0;
    if (e < q) {
      const char* digits = e + 1 < q && e[1] == '+' ? e + 2 : e + 1;
      if (std::from_chars(digits, q, exponent).ec != std::errc()) return e + 1 < q && e[1] == '-';
    }
    const int64_t lead_power = lead < point ? point - lead - 1 : point - lead;
    return lead_power + exponent < 0;
  }

  const mtx_header& h_;
  const mtx_read_options& options_;
};

// Entry lines (neither blank nor comment) in [p, end): only for the "too many entries" message.
int64_t count_entry_lines(const char* p, const char* end) {
  int64_t count = 0;
  while (p < end) {
    p = skip_blanks(p, end);
    if (p < end && *p != '\n' && *p != '%') ++count;
    const auto* nl = p < end ? static_cast<const char*>(std::memchr(p, '\n', end - p)) : nullptr;
    if (!nl) break;
    p = nl + 1;
  }
  return count;
}

// Splits [begin, end) into n pieces that each start at a line start.
std::vector<const char*> line_aligned_chunks(const char* begin, const char* end, int n) {
  std::vector<const char*> starts{begin};
  for (int i = 1; i < n; ++i) {
    const char* target = std::max(starts.back(), begin + (end - begin) / n * i);
    const auto* nl = static_cast<const char*>(std::memchr(target, '\n', end - target));
    starts.push_back(nl ? nl + 1 : end);
  }
  starts.push_back(end);
  return starts;
}

int chunk_count(size_t body_bytes) {
  constexpr size_t min_chunk = size_t{1} << 20;  // smaller bodies are not worth a thread
  const size_t by_size = std::max<size_t>(1, body_bytes / min_chunk);
  return static_cast<int>(std::min<size_t>(by_size, static_cast<size_t>(omp_get_max_threads())));
}

class body_reader {
 public:
  body_reader(const mtx_header& h, const char* data, size_t size, const std::string& name,
              const mtx_read_options& options)
      : h_(h), begin_(data + h.body_offset), end_(data + size), name_(name), scanner_(h, options) {}

  std::vector<triplet> read() {
    const auto starts = line_aligned_chunks(begin_, end_, chunk_count(end_ - begin_));
    const int n = static_cast<int>(starts.size()) - 1;
    std::vector<chunk_scan> scans(n);
#pragma omp parallel for num_threads(n) schedule(static, 1)
    for (int i = 0; i < n; ++i) scan_chunk(starts[i], starts[i + 1], i == 0, scans[i]);
    check(starts, scans);
    return merge(scans);
  }

 private:
  // Chunk 0 reserves room for the whole file's entries (an upper bound once the count is known
  // to match): merge() then appends the other chunks to it instead of copying everything.
  void scan_chunk(const char* begin, const char* end, bool first, chunk_scan& out) const {
    try {
      const char* from = first ? begin_ : begin;
      const char* to = first ? end_ : end;
      const double share = static_cast<double>(to - from) / std::max<ptrdiff_t>(1, end_ - begin_);
      const int64_t lines = static_cast<int64_t>(h_.nnz * share * (first ? 1.0 : 1.05)) + 16;
      const int64_t expected =
          std::min<int64_t>(lines, (to - from) / 4 + 1);  // an entry line has >= 4 bytes
      out.entries.reserve(expected * (h_.symmetry == mtx_symmetry::general ? 1 : 2));
    } catch (const std::bad_alloc&) {
      out.failed = out.out_of_memory = true;
      return;
    }
    scanner_.scan(begin, end, h_.nnz, out);
  }

  // Reports the first problem in file order: errors, then too many / too few entries.
  void check(const std::vector<const char*>& starts, std::vector<chunk_scan>& scans) const {
    int64_t entries_before = 0, lines_before = 0;
    const int64_t first_line = h_.size_line + 1;
    for (size_t i = 0; i < scans.size(); ++i) {
      chunk_scan* s = &scans[i];
      chunk_scan rescan;
      if (s->entry_lines > h_.nnz - entries_before) {  // the surplus starts in this chunk: find it
        scanner_.scan(starts[i], starts[i + 1], h_.nnz - entries_before, rescan);
        s = &rescan;
      }
      if (s->out_of_memory)
        fail_at(name_, h_.size_line,
                "out of memory while reading " + std::to_string(h_.nnz) + " entries");
      if (s->failed) {
        const int64_t line = first_line + lines_before + s->error.line;
        if (!s->error.too_many) fail_at(name_, line, s->error.why);
        fail_at(name_, line,
                "more entries than the " + std::to_string(h_.nnz) + " declared on line " +
                    std::to_string(h_.size_line) + " (found " +
                    std::to_string(count_entry_lines(begin_, end_)) + ")");
      }
      entries_before += s->entry_lines;
      lines_before += s->lines;
    }
    if (entries_before < h_.nnz)
      fail_at(name_, last_line(),
              "file ends after " + std::to_string(entries_before) + " entries, but line " +
                  std::to_string(h_.size_line) + " declares " + std::to_string(h_.nnz));
  }

  int64_t last_line() const {
    const int64_t newlines = std::count(begin_, end_, '\n');
    const bool partial = begin_ < end_ && end_[-1] != '\n';
    return h_.size_line + newlines + (partial ? 1 : 0);
  }

  static std::vector<triplet> merge(std::vector<chunk_scan>& scans) {
    size_t total = 0;
    for (const chunk_scan& s : scans) total += s.entries.size();
    std::vector<triplet> all = std::move(scans[0].entries);
    all.reserve(total);
    for (size_t i = 1; i < scans.size(); ++i) {
      all.insert(all.end(), scans[i].entries.begin(), scans[i].entries.end());
      std::vector<triplet>().swap(scans[i].entries);
    }
    return all;
  }

  const mtx_header& h_;
  const char* begin_;
  const char* end_;
  const std::string& name_;
  body_scanner scanner_;
};

// Appends text into a fixed buffer and hands it to the writer whenever it fills up.
class line_buffer {
 public:
  explicit line_buffer(atomic_file_writer& out) : out_(out), buf_(capacity + slack) {}

  void put(std::string_view s) {
    if (s.size() > slack) {
      flush();
      out_.write(s.data(), s.size());
      return;
    }
    std::memcpy(buf_.data() + used_, s.data(), s.size());
    advance(s.size());
  }
  template <typename T>
  void put_number(T v) {
    const auto [p, ec] = std::to_chars(buf_.data() + used_, buf_.data() + buf_.size(), v);
    (void)ec;  // slack always leaves room for the longest number
    advance(static_cast<size_t>(p - (buf_.data() + used_)));
  }
  void put_char(char c) {
    buf_[used_] = c;
    advance(1);
  }
  void flush() {
    out_.write(buf_.data(), used_);
    used_ = 0;
  }

 private:
  static constexpr size_t capacity = size_t{1} << 20;
  static constexpr size_t slack = 64;
  void advance(size_t n) {
    used_ += n;
    if (used_ >= capacity) flush();
  }

  atomic_file_writer& out_;
  std::vector<char> buf_;
  size_t used_ = 0;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

csr_matrix parse_matrix_market(const char* data, size_t size, const std::string& name,
                               const mtx_read_options& options) {
  const mtx_header h = parse_header(data, size, name);
  const int64_t needed = declared_bytes(h);
  if (needed > options.max_bytes)
    fail_at(name, h.size_line,
            "declared size " + std::to_string(h.rows) + " x " + std::to_string(h.cols) + " with " +
                std::to_string(h.nnz) + " entries needs " + std::to_string(needed) +
                " bytes (triplets + CSR), more than the limit of " +
                std::to_string(options.max_bytes) + " bytes (mtx_read_options::max_bytes)");
  std::vector<triplet> entries = body_reader(h, data, size, name, options).read();
  if (entries.size() > static_cast<size_t>(max_index))
    fail_at(name, h.size_line,
            "expanding the symmetry gives " + std::to_string(entries.size()) +
                " entries, more than the 2^31-1 that 32-bit indices allow");
  csr_matrix m = csr_from_triplets(static_cast<int32_t>(h.rows), static_cast<int32_t>(h.cols),
                                   std::move(entries));
  if (h.field == mtx_field::pattern) fill_pattern_values(m);  // the one rule, after merging
  return m;
}

csr_matrix read_matrix_market(const std::string& path, const mtx_read_options& options) {
  const size_t limit = static_cast<size_t>(std::max<int64_t>(0, options.max_bytes));
  const std::string text = read_file_decompressed(path, limit);
  return parse_matrix_market(text.data(), text.size(), path, options);
}

void write_matrix_market(const std::string& path, const csr_matrix& matrix) {
  try {
    validate_csr(matrix);
  } catch (const error& e) {
    throw error(path + ": not written: " + e.what());
  }
  atomic_file_writer file(path, ends_with(path, ".gz"));
  line_buffer out(file);
  out.put("%%MatrixMarket matrix coordinate real general\n");
  out.put_number(matrix.rows);
  out.put_char(' ');
  out.put_number(matrix.cols);
  out.put_char(' ');
  out.put_number(matrix.nnz());
  out.put_char('\n');
  for (int32_t r = 0; r < matrix.rows; ++r) {
    for (int32_t i = matrix.row_ptr[r]; i < matrix.row_ptr[r + 1]; ++i) {
      out.put_number(r + 1);
      out.put_char(' ');
      out.put_number(matrix.col_idx[i] + 1);
      out.put_char(' ');
      out.put_number(matrix.values[i]);  // shortest form that reads back to the same float
      out.put_char('\n');
    }
  }
  out.flush();
  file.commit();
}

}  // namespace sparserl
