#include "serve/evaluate_request.h"

#include <cmath>
#include <limits>
#include <set>

#include "sparse/content_hash.h"
#include "sparse/error.h"
#include "sparse/pattern_values.h"

namespace sparserl {

namespace {

using nlohmann::json;

constexpr int64_t max_index = std::numeric_limits<int32_t>::max();

// nlohmann's messages begin with "[json.exception.parse_error.101] "; the rest is the reason.
std::string without_prefix(const std::string& what) {
  const size_t close = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && close != std::string::npos
             ? what.substr(close + 2)
             : what;
}

void reject_unknown_keys(const json& object, const std::set<std::string>& known,
                         const std::string& where) {
  for (const auto& item : object.items())
    if (!known.count(item.key())) throw error(where + "unknown field \"" + item.key() + "\"");
}

int64_t integer_in(const json& v, int64_t lo, int64_t hi, const std::string& where) {
  if (!v.is_number_integer()) throw error(where + ": expected an integer, got " + v.dump());
  const bool huge = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi);
  const int64_t x = huge ? hi : v.get<int64_t>();
  if (huge || x < lo || x > hi)
    throw error(where + ": " + v.dump() + " is outside [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return x;
}

// `prefix` is "" for the body's own fields, "matrix." for the matrix's.
const json& array_field(const json& object, const char* key, const std::string& prefix) {
  const auto it = object.find(key);
  if (it == object.end()) throw error("missing \"" + prefix + key + "\"");
  if (!it->is_array()) throw error(prefix + key + ": expected an array");
  return *it;
}

std::vector<int32_t> indices(const json& array, int32_t bound, const std::string& where,
                             const char* dimension) {
  std::vector<int32_t> out;
  out.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    const json& v = array[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!v.is_number_integer()) throw error(at + ": expected an integer index, got " + v.dump());
    const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{max_index}
                          ? max_index + 1
                          : v.get<int64_t>();
    if (x < 0 || x >= bound)
      throw error(at + ": " + v.dump() + " is outside [0, " + std::to_string(bound) + ") (" +
                  dimension + " = " + std::to_string(bound) + ")");
    out.push_back(static_cast<int32_t>(x));
  }
  return out;
}

std::vector<float> values_of(const json& array, size_t expected, const std::string& where) {
  if (array.size() != expected)
    throw error(where + ": " + std::to_string(array.size()) + " values for " +
                std::to_string(expected) + " entries (one value per entry)");
  std::vector<float> out;
  out.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    const json& v = array[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!v.is_number()) throw error(at + ": expected a number, got " + v.dump());
    const float x = static_cast<float>(v.get<double>());
    if (!std::isfinite(x)) throw error(at + ": " + v.dump() + " is not a finite float");
    out.push_back(x);
  }
  return out;
}

inline_matrix parse_inline(const json& m) {
  inline_matrix out;
  const json& shape = array_field(m, "shape", "matrix.");
  if (shape.size() != 2) throw error("matrix.shape: expected [rows, cols], got " + shape.dump());
  out.rows = static_cast<int32_t>(integer_in(shape[0], 1, max_index, "matrix.shape[0]"));
  out.cols = static_cast<int32_t>(integer_in(shape[1], 1, max_index, "matrix.shape[1]"));
  const json& rows = array_field(m, "rows", "matrix.");
  const json& cols = array_field(m, "cols", "matrix.");
  if (rows.size() != cols.size())
    throw error("matrix: rows has " + std::to_string(rows.size()) + " entries but cols has " +
                std::to_string(cols.size()) + " (one (row, col) pair per nonzero)");
  if (rows.size() > static_cast<size_t>(max_index))
    throw error("matrix: more than 2^31 - 1 entries");
  out.row_idx = indices(rows, out.rows, "matrix.rows", "shape[0]");
  out.col_idx = indices(cols, out.cols, "matrix.cols", "shape[1]");
  const auto values = m.find("values");
  if (values != m.end() && !values->is_null()) {
    if (!values->is_array()) throw error("matrix.values: expected an array of numbers");
    out.values = values_of(*values, rows.size(), "matrix.values");
  }
  return out;
}

void parse_matrix(const json& body, evaluate_request& r) {
  const auto m = body.find("matrix");
  if (m == body.end()) throw error("missing \"matrix\" (inline rows/cols/shape, or a name)");
  if (!m->is_object())
    throw error("matrix: expected an object with rows, cols and shape, or with name");
  if (m->contains("name")) {
    reject_unknown_keys(*m, {"name"}, "matrix: with \"name\", ");
    const json& name = (*m)["name"];
    if (!name.is_string() || name.get<std::string>().empty())
      throw error("matrix.name: expected a non-empty string");
    r.matrix_name = name.get<std::string>();
    return;
  }
  reject_unknown_keys(*m, {"rows", "cols", "shape", "values"}, "matrix: ");
  r.matrix = parse_inline(*m);
}

void parse_programs(const json& body, evaluate_request& r, const request_limits& limits) {
  const json& programs = array_field(body, "programs", "");
  if (programs.empty()) throw error("programs: empty (send at least one completion)");
  if (programs.size() > static_cast<size_t>(limits.max_programs))
    throw error("programs: " + std::to_string(programs.size()) + " programs, at most " +
                std::to_string(limits.max_programs) + " per request (--max-programs)");
  for (size_t i = 0; i < programs.size(); ++i) {
    if (!programs[i].is_string())
      throw error("programs[" + std::to_string(i) + "]: expected a string (the completion text)");
    r.programs.push_back(programs[i].get<std::string>());
  }
}

}  // namespace

evaluate_request parse_evaluate_request(const std::string& body, const request_limits& limits) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    throw error("request body is not valid JSON: " + without_prefix(e.what()));
  }
  if (!j.is_object()) throw error("request body: expected a JSON object");
  reject_unknown_keys(j, {"id", "matrix", "op", "k", "programs"}, "request: ");
  evaluate_request r;
  if (j.contains("id")) {
    r.id = j["id"];
    if (!r.id.is_string() && !r.id.is_number_integer())
      throw error("id: expected a string or an integer, got " + r.id.dump());
  }
  if (j.contains("op")) {
    if (!j["op"].is_string()) throw error("op: expected \"spmv\" or \"spmm\"");
    const std::optional<sparse_op> op = parse_op(j["op"].get<std::string>());
    if (!op) throw error("op: \"" + j["op"].get<std::string>() + "\": expected spmv or spmm");
    r.op = *op;
  }
  if (r.op == sparse_op::spmm)
    r.k = j.contains("k") ? static_cast<int32_t>(integer_in(j["k"], 1, limits.max_k, "k")) : 64;
  parse_matrix(j, r);
  parse_programs(j, r, limits);
  if (r.matrix_name.empty()) check_dense_size(r.matrix.rows, r.matrix.cols, r.k, limits);
  return r;
}

void check_dense_size(int64_t rows, int64_t cols, int32_t k, const request_limits& limits) {
  const int64_t larger = std::max(rows, cols) * k;
  if (larger > limits.max_dense_elements)
    throw error("matrix: " + std::to_string(rows) + " x " + std::to_string(cols) +
                (k > 1 ? " with k = " + std::to_string(k) : std::string()) + " needs dense " +
                "vectors of " + std::to_string(larger) + " elements, above the limit of " +
                std::to_string(limits.max_dense_elements));
}

std::string content_key(const inline_matrix& m) {
  const int32_t shape[2] = {m.rows, m.cols};
  const std::string_view values = m.values ? bytes_of(*m.values) : std::string_view("pattern");
  return "sha256:" +
         sha256_hex({std::string_view(reinterpret_cast<const char*>(shape), sizeof shape),
                     bytes_of(m.row_idx), bytes_of(m.col_idx), m.values ? "values" : "pattern",
                     values});
}

csr_matrix build_csr(const inline_matrix& m) {
  std::vector<triplet> entries(m.row_idx.size());
  for (size_t i = 0; i < entries.size(); ++i)
    entries[i] = {m.row_idx[i], m.col_idx[i], m.values ? (*m.values)[i] : 0.0f};
  csr_matrix csr = csr_from_triplets(m.rows, m.cols, std::move(entries));
  if (!m.values) fill_pattern_values(csr);  // the one rule for patterns, as training uses
  validate_csr(csr);
  return csr;
}

}  // namespace sparserl
