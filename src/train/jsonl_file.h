#pragma once
// JSON Lines files: one JSON object per line. Reading reports every bad line as
// "<path>:<line>: <why>" (lines 1-based); writing goes through a temp file and a rename, so a
// reader never sees half a file. The SFT data, the corpus and the metrics log are all JSONL.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sparse/gzip_file.h"

namespace sparserl::train {

// Called with each line's object and its line number. It may throw sparserl::error("<why>"), and
// the reader rethrows it as "<name>:<line>: <why>".
using jsonl_record_fn = std::function<void(const nlohmann::json& record, int64_t line)>;

struct jsonl_read_options {
  int64_t max_bytes = int64_t{16} << 30;  // refuse (decompressed) files larger than this
  // A last line without its newline is a record cut by a crash or a writer still running: skip
  // it instead of failing (the metrics log, read while training runs).
  bool skip_unterminated_last_line = false;
};

// Every non-blank line must be a JSON object. gzip is recognised by its magic bytes.
void read_jsonl(const std::string& path, const jsonl_record_fn& on_record,
                const jsonl_read_options& options = {});
// The same over text in memory; `name` stands for the path in messages.
void parse_jsonl(std::string_view text, const std::string& name, const jsonl_record_fn& on_record,
                 const jsonl_read_options& options = {});

// One object as a JSONL line, '\n' included. Invalid UTF-8 in strings becomes U+FFFD.
std::string jsonl_line(const nlohmann::json& record);
std::string jsonl_line(const nlohmann::ordered_json& record);  // fields in insertion order

// Streams records into `path` atomically (gzip-compressed when the path ends in ".gz").
class jsonl_writer {
 public:
  explicit jsonl_writer(const std::string& path);
  void add(const nlohmann::json& record);
  void add(const nlohmann::ordered_json& record);
  void commit();

 private:
  atomic_file_writer out_;
};

}  // namespace sparserl::train
