#pragma once
// Batched autoregressive generation with qwen3_model: prompts of different lengths are left-padded
// into one batch, prefilled once, then decoded a token per step through the KV cache until every
// sequence has hit an EOS id, a stop string or max_new_tokens. One host sync per step (the copy of
// the step's tokens that the stop checks read).
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "model/decode_step.h"
#include "model/qwen3.h"
#include "model/sampling.h"
#include "text/tokenizer.h"

namespace sparserl {

// Maps a sequence's generated ids to its text (e.g. a tokenizer's decode).
using decode_fn = std::function<std::string(const std::vector<int32_t>&)>;

// A decode_fn over `tokenizer`, which must outlive it. Header-only so that sparserl_model does
// not link sparserl_text; the caller that uses it links the text module.
inline decode_fn tokenizer_decoder(const text::bpe_tokenizer& tokenizer) {
  return [&tokenizer](const std::vector<int32_t>& ids) { return tokenizer.decode(ids); };
}

struct generate_options {
  int64_t max_new_tokens = 128;
  std::set<int32_t> eos_token_ids;
  // A sequence stops once its decoded generated text contains one of these (needs `decode`).
  std::vector<std::string> stop_strings;
  // When set, every result gets its text, and stop_strings can be checked.
  decode_fn decode;
  sampling_options sampling;
  // [batch, p, hidden], placed right before each prompt (after its left padding).
  torch::Tensor prefix_embeds;
  // Fed at padding positions and to finished sequences; masked or ignored, so any valid id works.
  int32_t pad_token_id = 0;
  // How each decode step runs (model/decode_step.h); automatic: CUDA graphs on a GPU.
  decode_mode mode = decode_mode::automatic;
};

struct generation {
  std::vector<int32_t> ids;   // generated tokens, the EOS or stop-completing token included
  std::string finish_reason;  // "eos", "stop" or "length"
  std::string text;           // decode(ids) when a decode_fn was given
};

// One result per prompt, in order. Throws sparserl::error on an empty batch, an empty prompt
// without a prefix, stop strings without a decode_fn, bad sampling options or a prefix of the
// wrong shape.
std::vector<generation> generate(const qwen3_model& model,
                                 const std::vector<std::vector<int32_t>>& prompts,
                                 const generate_options& options);

}  // namespace sparserl
