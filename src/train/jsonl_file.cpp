#include "train/jsonl_file.h"

#include "sparse/error.h"

namespace sparserl::train {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

void read_jsonl(const std::string& path, const jsonl_record_fn& on_record,
                const jsonl_read_options& options) {
  const std::string text = read_file_decompressed(path, static_cast<size_t>(options.max_bytes));
  parse_jsonl(text, path, on_record, options);
}

void parse_jsonl(std::string_view text, const std::string& name, const jsonl_record_fn& on_record,
                 const jsonl_read_options& options) {
  int64_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    const bool terminated = end != std::string_view::npos;
    if (!terminated) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (blank(line)) continue;
    if (!terminated && options.skip_unterminated_last_line) return;
    const std::string where = name + ":" + std::to_string(line_no) + ": ";
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      // nlohmann's message starts "[json.exception.parse_error.101] parse error at ...".
      std::string why = e.what();
      if (const size_t cut = why.find("] "); cut != std::string::npos) why = why.substr(cut + 2);
      throw error(where + "not JSON: " + why);
    }
    if (!record.is_object())
      throw error(where + "expected a JSON object, got " + record.type_name());
    try {
      on_record(record, line_no);
    } catch (const error& e) {
      throw error(where + e.what());
    } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
      throw error(where + e.what());
    }
  }
}

std::string jsonl_line(const nlohmann::json& record) {
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

jsonl_writer::jsonl_writer(const std::string& path) : out_(path, ends_with(path, ".gz")) {}

std::string jsonl_line(const nlohmann::ordered_json& record) {
  return record.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void jsonl_writer::add(const nlohmann::json& record) {
  const std::string line = jsonl_line(record);
  out_.write(line.data(), line.size());
}

void jsonl_writer::add(const nlohmann::ordered_json& record) {
  const std::string line = jsonl_line(record);
  out_.write(line.data(), line.size());
}

void jsonl_writer::commit() { out_.commit(); }

}  // namespace sparserl::train
