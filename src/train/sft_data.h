#pragma once
// The SFT data set in the original SparseRL layout: JSONL, one matrix and its kernel per line:
//   {"rows": [0, 0, 1, ...], "cols": [3, 7, 1, ...], "shape": [n_rows, n_cols],
//    "format": "CSR", "code": "FORMAT: CSR\nLAUNCH: ...\n<CUDA source>", ...}
// rows[i], cols[i] is the i-th nonzero's position (no values: the data is a sparsity pattern).
// Fields this project adds, all optional on read: "name", "split" ("train" | "val"), "op"
// ("spmv" | "spmm", default spmv), "k" (SpMM columns, default 1), "label" (how the code was
// chosen, e.g. "autotune" or "heuristic"), "candidates" ([{"program", "time_ms", "correct"}]:
// every configuration the labeller evaluated, time_ms null when not timed), "generator" (the
// generator_spec that makes the matrix, sparse/generator_spec_json.h), with "nnz" and
// "pattern_sha256": a large generated matrix is stored by its recipe alone, without "rows" and
// "cols", and remade (and checked against the digest) when read. Any other field is kept as read
// and written back.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernel/program.h"
#include "sparse/csr_matrix.h"
#include "sparse/generators.h"

namespace sparserl::train {

struct sft_candidate {
  std::string program;            // expert_config::describe(), e.g. "ell spmv ELL block=256 ..."
  std::optional<double> time_ms;  // measured kernel time; empty when not timed (CPU)
  std::optional<double> speedup;  // vs cuSPARSE, when measured
  bool correct = false;
};

struct sft_sample {
  std::vector<int32_t> rows, cols;  // nonzero coordinates, same length; empty when only the
                                    // generator makes the matrix
  int32_t n_rows = 0, n_cols = 0;   // "shape"
  std::string format;               // the program's format name, as its FORMAT line has it
  std::string code;                 // the program text, first line "FORMAT: <format> ..."
  std::string name;                 // "" when absent
  std::string split;                // "" when absent
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;
  std::string label;
  std::vector<sft_candidate> candidates;
  std::optional<generator_spec> generator;  // the recipe of a generated matrix
  int64_t generated_nnz = 0;                // "nnz": with a generator and no coordinates
  std::string pattern_sha256;               // digest of the generated pattern ("" unchecked)
  nlohmann::json extra = nlohmann::json::object();  // every other field, kept as read

  bool by_generator() const { return generator && rows.empty(); }
  int64_t nnz() const { return by_generator() ? generated_nnz : static_cast<int64_t>(rows.size()); }
};

// Checks one record and converts it. Throws sparserl::error naming the field and why: a missing
// or mistyped required field, rows and cols of different lengths, an index outside the shape, a
// code that does not begin with "FORMAT:" or whose format disagrees with "format".
sft_sample sft_sample_from_json(const nlohmann::json& record);
// The original's fields first, in its order (rows, cols, shape, format, code), then ours.
nlohmann::ordered_json sft_sample_to_json(const sft_sample& sample);

// Errors "<path>:<line>: <why>". Blank lines are skipped; gzip is read transparently.
std::vector<sft_sample> read_sft_jsonl(const std::string& path);
// Atomic (temp file + rename); gzip when the path ends in ".gz".
void write_sft_jsonl(const std::string& path, const std::vector<sft_sample>& samples);

// The sample's pattern from a matrix: rows/cols in CSR order, the shape; nothing else is set.
sft_sample sft_pattern_of(const csr_matrix& matrix);

// The sample's matrix for the evaluation harness, which needs values: the pattern's values by the
// one rule for pattern matrices (sparse/pattern_values.h). Positions listed twice count once. A
// sample stored by its generator is generated again; throws when the result's pattern differs
// from the digest the label was written with (the generators changed since).

csr_matrix to_matrix(const sft_sample& sample);

// The digest "pattern_sha256" holds: SHA-256 of the shape, row_ptr and col_idx (no values).
std::string pattern_sha256(const csr_matrix& matrix);

// Stores the sample by `spec` alone (drops its coordinates; keeps nnz and the digest of `matrix`,
// which `spec` made).
void store_by_generator(sft_sample& sample, const generator_spec& spec, const csr_matrix& matrix);

}  // namespace sparserl::train
