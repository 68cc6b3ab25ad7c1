#pragma once
// Every rollout of a PPO step as one line of RUN/rollouts.jsonl (rank 0's rollouts): which program
// was sampled for which matrix, the harness's verdict and the advantage it got. The step means in
// metrics.jsonl cannot show what decides whether PPO can beat SFT: whether sampling finds programs
// faster than the one the policy usually writes for a matrix, and whether the update moves towards
// them (tools/learning_summary.py reads it).
// "program_sha256" is the digest of the program's identity (kernel/program_identity.h), so textual
// variants of one program, judged once, count as one program.
//   {"step": 3, "time": ..., "task": "mesh2d-...", "group": 4, "program": "rcsr_vector spmv RCSR
//    block=128 lanes=4", "program_sha256": "3f2a...", "extracted": true, "correct": true,
//    "speedup": 1.31, "reward": 1.39, "advantage": 0.12, "used": true, "failure": ""}
#include <torch/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/verdict.h"
#include "kernel/program.h"
#include "train/ppo_task.h"
#include "train/rollouts.h"

namespace sparserl::train {

// What names a program in the log: its "// expert:" line when the program is that config's (same
// program_identity as emit_program's), else its FORMAT and LAUNCH lines, with " (edited from
// <the line>)" where the model kept a line its program no longer matches (PPO on the H100,
// 2026-12-06: "BSR ... block=128 group=4" above `LAUNCH: block=256 rows_per_block=32`), else
// "(no program)".
std::string program_label(const std::string& program, sparse_op op);

// One JSON object per row of `r` (no "step" or "time": metrics_log adds them). `identities` are
// the rows' program identities (rollout_identities, train/rollout_judge.h). `advantages` is
// [rows, t] with 0 on padding, `mask` the response mask; a row's advantage is its mean over its
// response tokens. `used`: the rows that entered the update.
std::vector<nlohmann::json> rollout_records(const rollouts& r, const std::vector<ppo_task>& tasks,
                                            const std::vector<verdict>& verdicts,
                                            const std::vector<std::string>& identities,
                                            const torch::Tensor& advantages,
                                            const torch::Tensor& mask,
                                            const std::vector<int64_t>& used);

}  // namespace sparserl::train
