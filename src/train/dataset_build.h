#pragma once
// Building the SFT data set: each matrix labelled with an expert program.
//   - autotune (a GPU runner: timing): every candidate of the expert library's pruned space is
//     verified and timed (eval/autotune.h); the label is the fastest correct one, and every
//     candidate's time is kept in "candidates" for later use (reward baselines, ranking losses);
//   - heuristic (the CPU emulator: no timing, where tuning would rank nothing): the feature
//     heuristic's pick (kernel/heuristic.h), verified correct by the emulator unless verification
//     is off (a program failing it leaves its matrix out, with a warning).
// Each sample's split ("train" | "val") comes from a hash of the matrix's structure
// (train/data_split.h): split by matrix, never by sample. Matrices with the same structure as an
// earlier one are left out, so a pattern is never in both splits or twice in one.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "eval/runner.h"
#include "sparse/csr_matrix.h"
#include "sparse/generators.h"
#include "train/sft_data.h"

namespace sparserl::train {

// A matrix to label: a Matrix Market file (read when labelled), one already in memory, or a
// generated one (made again from its spec when labelled: a set of large matrices is never held
// in memory at once).
struct matrix_item {
  std::string name;
  std::string path;                          // "" for in-memory and generated
  std::shared_ptr<const csr_matrix> matrix;  // set for in-memory
  std::optional<generator_spec> spec;        // what made a generated matrix (none for files)
  csr_matrix load() const;
  // The generator family, "" for files.
  std::string family() const { return spec ? spec->family : ""; }
};

// The .mtx and .mtx.gz files under `dir` (recursively), sorted by path; names are the paths
// relative to dir. Throws sparserl::error when dir is not a directory or holds no such file.
std::vector<matrix_item> matrix_files(const std::string& dir);

// `count` distinct generated matrices cycling through every generator family, with rows drawn
// from [min_rows, max_rows] and each family's parameters (stencil points, band width, block size,
// degree, density) from `seed`. The same arguments give the same matrices on every machine.
// `families` empty: the classic families (sparse/generators.h); else the named ones, in turn.
// Generated on `threads` threads (0: one per core), a few per thread at a time; each item keeps
// its spec, not its matrix, so memory stays that of a few matrices (1440 matrices of 100-400k
// rows, each held, took more than 24 GiB). `block_sizes` non-empty: every matrix of a
// family with a dense block size (block_diagonal, fem) takes its block uniformly from these
// instead of the family's own draw; every other parameter stays as drawn without it.
std::vector<matrix_item> generated_matrices(int64_t count, uint64_t seed, int32_t max_rows = 256,
                                            std::vector<std::string> families = {},
                                            int32_t min_rows = 16, int threads = 1,
                                            const std::vector<int32_t>& block_sizes = {});

enum class labeller { automatic, autotune, heuristic };  // automatic: autotune on a GPU runner

struct dataset_build_options {
  sparse_op op = sparse_op::spmv;
  int32_t k = 64;  // SpMM columns (as eval, tune and serve)
  double val_fraction = 0.1;
  labeller label = labeller::automatic;
  bool verify = true;  // heuristic labels: check them on the runner
  // Larger matrices from files are left out (their rows/cols lines get huge); larger generated
  // ones are stored by their generator alone (sft_data.h), every smaller one with its coordinates.
  int64_t max_nnz = 200000;
  int threads = 1;       // matrices labelled at once
  bool progress = true;  // a progress bar on stderr
  // Structure hashes (train/data_split.h) of matrices labelled before (`dataset build --extend`):
  // such a matrix is skipped before any labelling work and counted in `already_labelled`.
  std::set<uint64_t> already_labelled;
};

struct dataset_build_result {
  std::vector<sft_sample> samples;    // in the items' order
  std::vector<std::string> warnings;  // one line per matrix left out
  int64_t duplicates = 0, too_large = 0, unlabelled = 0, already_labelled = 0;
  std::string method;  // e.g. "autotune on gpu", "heuristic verified on cpu"
};

// The structure hashes (train/data_split.h) of earlier samples, for `already_labelled`; samples
// stored by their generator are remade, on `threads` threads.
std::set<uint64_t> structure_hashes(const std::vector<sft_sample>& samples, int threads);

// `runner` may be null for unverified heuristic labels. `eval` configures the evaluator (arch,
// trials, limits).
dataset_build_result build_sft_dataset(const std::vector<matrix_item>& items,
                                       program_runner* runner, const eval_options& eval,
                                       const dataset_build_options& options);

}  // namespace sparserl::train
