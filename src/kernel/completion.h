#pragma once
// Turns raw model output (prose, markdown fences, several code blocks, truncated text) into a
// kernel_program, or a precise reason why not. Never throws, whatever the bytes.
#include <optional>
#include <string>

#include "kernel/program.h"

namespace sparserl {

struct parse_result {
  std::optional<kernel_program> program;
  std::string error;  // set when program is empty: what is missing or malformed, and where
};

parse_result parse_completion(const std::string& text, sparse_op op);

// Parses one LAUNCH line body ("block=256 rows_per_block=8") into `out`; returns "" on success,
// else the reason.
std::string parse_launch_line(const std::string& line, launch_spec& out);

}  // namespace sparserl
