// libFuzzer target: load_qwen3_config (model/hf_config.h) on arbitrary bytes as config.json, with
// and without allow_other. It must either give a config that validates and survives
// to_json -> parse_qwen3_config unchanged, or throw sparserl::error on one line naming the
// file. Anything else is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "memory_file.h"
#include "model/hf_config.h"
#include "sparse/error.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_hf_config: %s\n", what.c_str());
  std::abort();
}

bool same(const sparserl::qwen3_config& a, const sparserl::qwen3_config& b) {
  return a.vocab_size == b.vocab_size && a.hidden_size == b.hidden_size &&
         a.intermediate_size == b.intermediate_size && a.num_hidden_layers == b.num_hidden_layers &&
         a.num_attention_heads == b.num_attention_heads &&
         a.num_key_value_heads == b.num_key_value_heads && a.head_dim == b.head_dim &&
         a.max_position_embeddings == b.max_position_embeddings &&
         a.rms_norm_eps == b.rms_norm_eps && a.rope_theta == b.rope_theta &&
         a.tie_word_embeddings == b.tie_word_embeddings && a.attention_bias == b.attention_bias &&
         a.torch_dtype == b.torch_dtype && a.bos_token_ids == b.bos_token_ids &&
         a.eos_token_ids == b.eos_token_ids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparserl;
  const fuzz::memory_file file(data, size);
  const bool allow_other = size > 0 && (data[size - 1] & 1);
  qwen3_config cfg;
  try {
    cfg = load_qwen3_config(file.path(), allow_other);
  } catch (const error& e) {
    const std::string what = e.what();
    if (what.find(file.path()) == std::string::npos || what.find('\n') != std::string::npos)
      finding("bad message: " + what);
    return 0;
  } catch (const std::exception& e) {
    finding(std::string("exception other than sparserl::error: ") + e.what());
  }
  try {
    validate(cfg, "parsed");
    const qwen3_config again = parse_qwen3_config(to_json(cfg), "round trip");
    if (!same(cfg, again)) finding("to_json -> parse_qwen3_config changed the config");
  } catch (const std::exception& e) {
    finding(std::string("a loaded config fails to round-trip: ") + e.what());
  }
  return 0;
}
