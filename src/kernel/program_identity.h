#pragma once
// What the harness judges of a completion, as a string: two completions with the same identity get
// the same verdict. The evaluator judges only what parse_completion extracts (the FORMAT and
// LAUNCH values and the device source), and the compiler sees neither comments nor how much
// whitespace separates two tokens. PPO judges each identity once per task and step
// (train/rollout_judge.h): textual variants of one program (another comment, another indent)
// would otherwise get rewards that differ by timing noise alone, which a group-relative baseline
// turns into advantages.
#include <string>

#include "kernel/program.h"

namespace sparserl {

// "program\n" + the canonical FORMAT and LAUNCH lines + the device source's tokens (a newline
// between tokens a newline separated outside a block comment, a space between tokens that were
// apart, nothing between adjacent ones: `F(x)` and `F (x)` differ in a macro definition). Where the
// tokens might not be what the compiler sees (a lexical error, a stray byte, a line splice, a
// digraph) the source is kept as written. A completion that does not parse: "text\n" + the
// completion.
std::string program_identity(const std::string& completion, sparse_op op);

}  // namespace sparserl
