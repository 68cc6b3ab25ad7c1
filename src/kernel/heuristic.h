#pragma once
// A one-shot choice from the expert library by structural rules, without timing: the starting
// point for the autotuner and the "expert" baseline when no GPU is there to tune.
#include <optional>
#include <string>

#include "kernel/expert_library.h"
#include "sparse/features.h"

namespace sparserl {

// A configuration of the expert library (emit_program accepts it) for a matrix with features
// `f`; `k` is the SpMM column count (ignored for SpMV). The rules are documented in heuristic.cpp.
expert_config pick_heuristic(sparse_op op, const matrix_features& f, int k);

// What the tuner times: expert_space with the heuristic's pick added at the end when the space
// lacks it (a rule may pick what the pruned space leaves out).
std::vector<expert_config> tuning_space(sparse_op op, const matrix_features& f, int k);

// The configuration of tuning_space whose describe() is `described` (a label's or an earlier
// run's program), or none when today's space no longer holds it.
std::optional<expert_config> find_in_tuning_space(sparse_op op, const matrix_features& f, int k,
                                                  const std::string& described);

}  // namespace sparserl
