#pragma once
// A nesting limit for nlohmann::json on untrusted bytes. nlohmann builds, destroys and dumps a
// document recursively, one stack frame per level, so a few megabytes of '[' (a hostile
// tokenizer.json, config.json or safetensors header) overflow the stack. Given as the parse
// callback, json_depth_limit() refuses a document as soon as it goes deeper than the limit,
// before anything that deep exists. Real files of these kinds nest fewer than 10 levels.
#include <nlohmann/json.hpp>
#include <string>

#include "sparse/error.h"

namespace sparserl {

inline constexpr int max_json_depth = 128;

// For callbacks that do more: throws sparserl::error "JSON nested deeper than 128 levels".
inline bool within_json_depth(int depth) {
  if (depth > max_json_depth)
    throw error("JSON nested deeper than " + std::to_string(max_json_depth) + " levels");
  return true;
}

inline nlohmann::json::parser_callback_t json_depth_limit() {
  return [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    return within_json_depth(depth);
  };
}

}  // namespace sparserl
