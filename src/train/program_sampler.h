#pragma once
// Sampling kernel programs from the policy for a batch of (matrix, op) tasks: matrix prefix +
// prompt in, generation until the program's end token, EOS or max_new_tokens. PPO's rollouts,
// `sparserl generate` and the quickstart all sample through here.
#include <optional>
#include <vector>

#include "kernel/program.h"
#include "model/generate.h"
#include "model/matrix_encoding.h"
#include "train/policy.h"
#include "train/prompt.h"

namespace sparserl::train {

// What the policy reads of a matrix: the prefix's encoding and the prompt's facts, made from one
// compute_features pass (the node order it states renumbers a matrix in random order).
struct matrix_input {
  matrix_encoding encoding;
  prompt_matrix facts;
};
matrix_input read_matrix(const policy& p, const csr_matrix& matrix);

struct program_request {
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;
  const matrix_input* input = nullptr;
};

struct sampled_programs {
  std::vector<std::vector<int32_t>> prompts;  // token ids, one per request
  std::vector<generation> generations;        // text has the program end stripped
  torch::Tensor prefix;                       // [b, p, hidden], no grad
};

// The program's header: its text before the first blank line (FORMAT, LAUNCH and the expert
// template's "// expert:" line), where the policy chooses the program; the source follows it.
inline const char* program_header_end = "\n\n";

// Every token is drawn with `sampling`; with `header` set, the header's tokens (up to and
// including the one that completes program_header_end) are drawn with `header` instead and the
// source after it with `sampling`, each program continuing from its own header. PPO explores
// the choice of program this way without the broken sources that a flat distribution over every
// token writes (docs/training.md, "Exploring the header").
sampled_programs sample_programs(const policy& p, const std::vector<program_request>& requests,
                                 int64_t max_new_tokens, const sampling_options& sampling,
                                 const std::optional<sampling_options>& header = std::nullopt);

}  // namespace sparserl::train
