#include "train/sft_data.h"

#include <algorithm>
#include <cctype>

#include "sparse/content_hash.h"
#include "sparse/error.h"
#include "sparse/generator_spec_json.h"
#include "sparse/pattern_values.h"
#include "train/jsonl_file.h"

namespace sparserl::train {

namespace {

using nlohmann::json;

const char* const known_fields[] = {
    "rows", "cols", "shape", "format",     "code",      "name", "split",
    "op",   "k",    "label", "candidates", "generator", "nnz",  "pattern_sha256"};

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw error("field '" + field + "': " + why);
}

const json& required(const json& record, const char* field) {
  const auto it = record.find(field);
  if (it == record.end()) bad(field, "missing");
  return *it;
}

int64_t integer(const json& value, const std::string& field, int64_t lo, int64_t hi) {
  if (!value.is_number_integer())
    bad(field, std::string("expected an integer, got ") + value.dump());
  const int64_t v = value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX
                        ? INT64_MAX
                        : value.get<int64_t>();
  if (v < lo || v > hi)
    bad(field,
        std::to_string(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

std::string text(const json& value, const std::string& field) {
  if (!value.is_string()) bad(field, std::string("expected a string, got ") + value.type_name());
  return value.get<std::string>();
}

std::vector<int32_t> indices(const json& value, const std::string& field, int32_t bound) {
  if (!value.is_array()) bad(field, std::string("expected an array, got ") + value.type_name());
  std::vector<int32_t> out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i)
    out.push_back(static_cast<int32_t>(
        integer(value[i], field + "[" + std::to_string(i) + "]", 0, int64_t{bound} - 1)));
  return out;
}

std::optional<double> number_or_null(const json& value, const std::string& field) {
  if (value.is_null()) return std::nullopt;
  if (!value.is_number()) bad(field, std::string("expected a number or null, got ") + value.dump());
  return value.get<double>();
}

sft_candidate candidate_from_json(const json& c, const std::string& field) {
  if (!c.is_object()) bad(field, std::string("expected an object, got ") + c.type_name());
  sft_candidate out;
  if (!c.contains("program")) bad(field + ".program", "missing");
  out.program = text(c["program"], field + ".program");
  if (c.contains("time_ms")) out.time_ms = number_or_null(c["time_ms"], field + ".time_ms");
  if (c.contains("speedup")) out.speedup = number_or_null(c["speedup"], field + ".speedup");
  if (c.contains("correct")) {
    if (!c["correct"].is_boolean()) bad(field + ".correct", "expected true or false");
    out.correct = c["correct"].get<bool>();
  }
  return out;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The format name on the code's first line: "FORMAT: SELL C=32" -> "SELL".
void check_code(const std::string& code, const std::string& format) {
  static const std::string prefix = "FORMAT:";
  if (code.compare(0, prefix.size(), prefix) != 0)
    bad("code", "does not begin with \"FORMAT:\" (begins \"" + code.substr(0, 20) + "\")");
  const size_t begin = code.find_first_not_of(" \t", prefix.size());
  const size_t end = code.find_first_of(" \t\r\n", begin);
  const std::string named = begin == std::string::npos ? "" : code.substr(begin, end - begin);
  if (lower(named) != lower(format))
    bad("format", "\"" + format + "\" disagrees with the code's FORMAT line (\"" + named + "\")");
}

nlohmann::ordered_json optional_double(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

sft_sample sft_sample_from_json(const json& record) {
  sft_sample s;
  const json& shape = required(record, "shape");
  if (!shape.is_array() || shape.size() != 2)
    bad("shape", "expected [n_rows, n_cols], got " + shape.dump());
  s.n_rows = static_cast<int32_t>(integer(shape[0], "shape[0]", 0, INT32_MAX));
  s.n_cols = static_cast<int32_t>(integer(shape[1], "shape[1]", 0, INT32_MAX));
  if (record.contains("generator")) {
    try {
      s.generator = generator_spec_from_json(record["generator"].dump());
    } catch (const error& e) {
      bad("generator", e.what());
    }
    if (record.contains("pattern_sha256"))
      s.pattern_sha256 = text(record["pattern_sha256"], "pattern_sha256");
  }
  // Coordinates may be left out only where the generator remakes them.
  if (s.generator && !record.contains("rows") && !record.contains("cols")) {
    s.generated_nnz = integer(required(record, "nnz"), "nnz", 0, INT64_MAX);
  } else {
    s.rows = indices(required(record, "rows"), "rows", s.n_rows);
    s.cols = indices(required(record, "cols"), "cols", s.n_cols);
  }
  if (s.rows.size() != s.cols.size())
    bad("cols", "has " + std::to_string(s.cols.size()) + " entries, rows has " +
                    std::to_string(s.rows.size()));
  s.format = text(required(record, "format"), "format");
  s.code = text(required(record, "code"), "code");
  check_code(s.code, s.format);
  if (record.contains("name")) s.name = text(record["name"], "name");
  if (record.contains("split")) s.split = text(record["split"], "split");
  if (record.contains("label")) s.label = text(record["label"], "label");
  if (record.contains("op")) {
    const std::string op = text(record["op"], "op");
    const std::optional<sparse_op> parsed = parse_op(op);
    if (!parsed) bad("op", "\"" + op + "\": expected spmv or spmm");
    s.op = *parsed;
  }
  if (record.contains("k")) s.k = static_cast<int32_t>(integer(record["k"], "k", 1, INT32_MAX));
  if (record.contains("candidates")) {
    const json& list = record["candidates"];
    if (!list.is_array())
      bad("candidates", std::string("expected an array, got ") + list.type_name());
    for (size_t i = 0; i < list.size(); ++i)
      s.candidates.push_back(candidate_from_json(list[i], "candidates[" + std::to_string(i) + "]"));
  }
  for (const auto& [key, value] : record.items())
    if (std::find(std::begin(known_fields), std::end(known_fields), key) == std::end(known_fields))
      s.extra[key] = value;
  return s;
}

nlohmann::ordered_json sft_sample_to_json(const sft_sample& s) {
  nlohmann::ordered_json j;
  if (!s.by_generator()) {
    j["rows"] = s.rows;
    j["cols"] = s.cols;
  }
  j["shape"] = {s.n_rows, s.n_cols};
  j["format"] = s.format;
  j["code"] = s.code;
  if (!s.name.empty()) j["name"] = s.name;
  if (!s.split.empty()) j["split"] = s.split;
  if (s.op != sparse_op::spmv || s.k != 1) {
    j["op"] = op_name(s.op);
    j["k"] = s.k;
  }
  if (!s.label.empty()) j["label"] = s.label;
  if (s.generator) {
    j["generator"] = json::parse(generator_spec_to_json(*s.generator));
    if (s.by_generator()) j["nnz"] = s.generated_nnz;
    if (!s.pattern_sha256.empty()) j["pattern_sha256"] = s.pattern_sha256;
  }
  if (!s.candidates.empty()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const sft_candidate& c : s.candidates)
      list.push_back({{"program", c.program},
                      {"time_ms", optional_double(c.time_ms)},
                      {"speedup", optional_double(c.speedup)},
                      {"correct", c.correct}});
    j["candidates"] = std::move(list);
  }
  for (const auto& [key, value] : s.extra.items()) j[key] = value;
  return j;
}

std::vector<sft_sample> read_sft_jsonl(const std::string& path) {
  std::vector<sft_sample> samples;
  read_jsonl(path,
             [&](const json& record, int64_t) { samples.push_back(sft_sample_from_json(record)); });
  return samples;
}

void write_sft_jsonl(const std::string& path, const std::vector<sft_sample>& samples) {
  jsonl_writer out(path);
  for (const sft_sample& s : samples) out.add(sft_sample_to_json(s));
  out.commit();
}

sft_sample sft_pattern_of(const csr_matrix& matrix) {
  sft_sample s;
  s.n_rows = matrix.rows;
  s.n_cols = matrix.cols;
  s.rows.reserve(matrix.col_idx.size());
  for (int32_t r = 0; r < matrix.rows; ++r)
    for (int32_t i = matrix.row_ptr[r]; i < matrix.row_ptr[r + 1]; ++i) s.rows.push_back(r);
  s.cols = matrix.col_idx;
  return s;
}

std::string pattern_sha256(const csr_matrix& m) {
  const int32_t shape[2] = {m.rows, m.cols};
  return sha256_hex({{reinterpret_cast<const char*>(shape), sizeof shape},
                     bytes_of(m.row_ptr),
                     bytes_of(m.col_idx)});
}

void store_by_generator(sft_sample& s, const generator_spec& spec, const csr_matrix& m) {
  s.generator = spec;
  s.generated_nnz = m.nnz();
  s.pattern_sha256 = pattern_sha256(m);
  // Freed, not cleared: a cleared vector keeps its capacity, and a set of large samples kept
  // every pattern's memory (15 MB a matrix of 100-400k rows).
  std::vector<int32_t>().swap(s.rows);
  std::vector<int32_t>().swap(s.cols);
}

csr_matrix to_matrix(const sft_sample& sample) {
  if (sample.by_generator()) {
    csr_matrix m = generate_matrix(*sample.generator);
    if (m.rows != sample.n_rows || m.cols != sample.n_cols || m.nnz() != sample.generated_nnz ||
        (!sample.pattern_sha256.empty() && pattern_sha256(m) != sample.pattern_sha256))
      throw error("sft sample '" + sample.name +
                  "': its generator makes another matrix than the one labelled (the generators "
                  "changed since the label was written)");
    fill_pattern_values(m);
    return m;
  }
  if (sample.rows.size() != sample.cols.size())
    throw error("sft sample '" + sample.name + "': rows and cols differ in length");
  std::vector<std::pair<int32_t, int32_t>> positions(sample.rows.size());
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = {sample.rows[i], sample.cols[i]};
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  std::vector<triplet> entries;
  entries.reserve(positions.size());
  for (const auto& [r, c] : positions) entries.push_back({r, c, 0.0f});
  csr_matrix m = csr_from_triplets(sample.n_rows, sample.n_cols, std::move(entries));
  fill_pattern_values(m);
  return m;
}

}  // namespace sparserl::train
