#pragma once
// The body of POST /v1/evaluate, parsed and checked before any work is queued:
//   {"id": "r1",                                     optional string or integer, echoed back
//    "matrix": {"rows": [..], "cols": [..], "shape": [n, m], "values": [..]}   inline (SFT JSONL
//              layout: coordinate lists of the nonzeros, 0-based), values optional (1.0 each:
//              a pattern matrix, as Matrix Market pattern files read), duplicates summed
//           or {"name": "cant"}                      a matrix of the registered set (--matrices)
//    "op": "spmv" | "spmm",                          default spmv
//    "k": 64,                                        SpMM: columns of B, 1..4096 (default 64)
//    "programs": ["FORMAT: CSR\n...", ...]}          completions, 1..max_programs
// Every problem is one sparserl::error naming the field ("matrix.rows[3]: 12 is outside [0, 10)
// (shape[0] = 10)"), answered as 400.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernel/program.h"
#include "sparse/csr_matrix.h"

namespace sparserl {

struct request_limits {
  int max_programs = 64;
  int32_t max_k = 4096;
  // rows * k and cols * k (the dense output and input) at most this: an inline matrix is small to
  // send but its vectors are allocated by the harness, once per trial.
  int64_t max_dense_elements = int64_t{1} << 25;
};

struct inline_matrix {
  int32_t rows = 0, cols = 0;
  std::vector<int32_t> row_idx, col_idx;
  std::optional<std::vector<float>> values;  // empty: a pattern matrix, every value 1.0
};

struct evaluate_request {
  nlohmann::json id;  // null when the client sent none
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;            // 1 for SpMV
  std::string matrix_name;  // set: a registered matrix; else `matrix`
  inline_matrix matrix;
  std::vector<std::string> programs;
};

// Throws sparserl::error on malformed JSON, unknown or mistyped fields, or values out of range.
evaluate_request parse_evaluate_request(const std::string& body, const request_limits& limits);

// SHA-256 over the inline matrix's shape, coordinates and values (or "pattern"): the cache key
// and the evaluator's task id, so equal requests share conversions, inputs and references.
std::string content_key(const inline_matrix& m);

// The CSR form (duplicates summed, columns sorted); a pattern (no values) gets the values of
// sparse/pattern_values.h, duplicates counted once, as training and pattern .mtx files do.
csr_matrix build_csr(const inline_matrix& m);

// Throws sparserl::error when rows * k or cols * k exceed limits.max_dense_elements.
void check_dense_size(int64_t rows, int64_t cols, int32_t k, const request_limits& limits);

}  // namespace sparserl
