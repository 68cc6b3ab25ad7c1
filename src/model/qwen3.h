#pragma once
// The Qwen3 decoder (transformers' Qwen3ForCausalLM) in LibTorch: weights loaded by their HF names
// from a safetensors checkpoint, and a forward pass that computes what transformers computes
// (RMSNorm in fp32, per-head q/k RMSNorm before half-split rotary, GQA, causal softmax attention,
// SwiGLU MLP, final norm, lm_head tied or not), with optional prefix embeddings, padding mask,
// explicit positions and a KV cache for incremental decoding.
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/hf_config.h"
#include "model/safetensors.h"

namespace sparserl {

struct qwen3_layer_weights {
  torch::Tensor input_layernorm;           // [hidden]
  torch::Tensor q_proj, k_proj, v_proj;    // [heads * head_dim | kv_heads * head_dim, hidden]
  torch::Tensor o_proj;                    // [hidden, heads * head_dim]
  torch::Tensor q_norm, k_norm;            // [head_dim]
  torch::Tensor post_attention_layernorm;  // [hidden]
  torch::Tensor gate_proj, up_proj;        // [intermediate, hidden]
  torch::Tensor down_proj;                 // [hidden, intermediate]
};

struct qwen3_weights {
  torch::Tensor embed_tokens;  // [vocab, hidden]
  std::vector<qwen3_layer_weights> layers;
  torch::Tensor norm;     // [hidden]
  torch::Tensor lm_head;  // [vocab, hidden]; the same tensor as embed_tokens when tied
};

// Reads every tensor the config implies (F32, BF16 or F16 in the file) into owned tensors of
// `dtype` on `device`; throws naming the first missing, mis-typed or mis-shaped tensor. Tensors
// the decoder does not use (e.g. a redundant lm_head.weight of a tied model) are ignored.
qwen3_weights load_qwen3_weights(const sharded_checkpoint& ckpt, const qwen3_config& cfg,
                                 torch::Dtype dtype = torch::kFloat32,
                                 torch::Device device = torch::kCPU);

// Keys and values of every layer for the tokens seen so far (after rotary), [batch, kv_heads,
// length, head_dim] each. Empty until the first forward that is given it.
struct qwen3_kv_cache {
  std::vector<torch::Tensor> keys;
  std::vector<torch::Tensor> values;

  int64_t length() const { return keys.empty() ? 0 : keys[0].size(2); }
  void clear() {
    keys.clear();
    values.clear();
  }
};

struct qwen3_forward_options {
  // [batch, p, hidden], placed before the token embeddings (e.g. a projected matrix encoding).
  torch::Tensor prefix_embeds;
  // [batch, cached + p + seq], 1 for a real token and 0 for padding, covering the cached tokens
  // too (as transformers' attention_mask does). Undefined means every token is real.
  torch::Tensor attention_mask;
  // [batch, p + seq] positions of the new tokens. Undefined: cumsum(mask) - 1 (1 on padding, as
  // transformers' generate() does) when there is a mask, else cached + 0, 1, 2, ...
  torch::Tensor position_ids;
  // When set, attention also sees the cached keys/values, and the new ones are appended.
  qwen3_kv_cache* cache = nullptr;
};

class qwen3_model {
 public:
  qwen3_model(qwen3_config cfg, qwen3_weights weights);

  // A HF model directory: config.json plus model.safetensors or a sharded index.
  static qwen3_model load(const std::string& dir, torch::Dtype dtype = torch::kFloat32,
                          torch::Device device = torch::kCPU);

  // input_ids [batch, seq] (int64 or int32; seq may be 0 when a prefix is given) -> fp32 logits
  // [batch, p + seq, vocab], one row per prefix position and token. Padding positions get
  // finite logits of no meaning.
  torch::Tensor forward(const torch::Tensor& input_ids,
                        const qwen3_forward_options& options = {}) const;

  // Token embeddings [batch, seq, hidden] in the weights' dtype.
  torch::Tensor embed(const torch::Tensor& input_ids) const;

  const qwen3_config& config() const { return cfg_; }
  const qwen3_weights& weights() const { return weights_; }

 private:
  torch::Tensor attention(const qwen3_layer_weights& w, const torch::Tensor& x,
                          const torch::Tensor& cos, const torch::Tensor& sin,
                          const torch::Tensor& allowed, qwen3_kv_cache* cache, size_t layer) const;
  torch::Tensor mlp(const qwen3_layer_weights& w, const torch::Tensor& x) const;
  torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight) const;

  qwen3_config cfg_;
  qwen3_weights weights_;
};

}  // namespace sparserl
