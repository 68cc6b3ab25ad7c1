#pragma once
// The Qwen3 decoder (transformers' Qwen3ForCausalLM) in LibTorch: weights loaded by their HF names
// from a safetensors checkpoint, and a forward pass that computes what transformers computes
// (RMSNorm in fp32, per-head q/k RMSNorm before half-split rotary, GQA, causal softmax attention,
// SwiGLU MLP, final norm, lm_head tied or not), with optional prefix embeddings, padding mask,
// explicit positions and a KV cache for incremental decoding. Trainable: autograd flows through
// forward / forward_hidden to the base weights (when set_base_trainable) or to LoRA adapters on
// any of the seven linears (attach_lora, base frozen), and adapters can be switched off per call
// so one model serves as both the trained policy and its frozen reference.
#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/hf_config.h"
#include "model/lora.h"
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

// Every per-layer tensor: its name after "model.layers.N.", its shape under `cfg` and where it
// lives. 1-D entries are the RMSNorm scales, 2-D ones the linears.
struct qwen3_layer_tensor {
  const char* suffix;
  std::vector<int64_t> shape;
  torch::Tensor qwen3_layer_weights::*member;
};
std::vector<qwen3_layer_tensor> qwen3_layer_tensors(const qwen3_config& cfg);

// The LoRA adapters of one layer, by module; undefined where the module is not targeted.
struct qwen3_layer_lora {
  lora_linear q_proj, k_proj, v_proj, o_proj;
  lora_linear gate_proj, up_proj, down_proj;
};

// The seven linears of a layer that LoRA can target: HF module name, parent module ("self_attn"
// or "mlp"), base weight and adapter.
struct qwen3_linear {
  const char* name;
  const char* parent;
  torch::Tensor qwen3_layer_weights::*weight;
  lora_linear qwen3_layer_lora::*adapter;
};
const std::vector<qwen3_linear>& qwen3_linears();

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
  // Views of the first length() positions of each layer's keys and values.
  std::vector<torch::Tensor> keys;
  std::vector<torch::Tensor> values;
  // With reserve(n), the first forward allocates [batch, kv_heads, n, head_dim] per layer once and
  // later steps write into it in place (no per-step reallocation and copy of the whole cache);
  // growing past n falls back to concatenation.
  std::vector<torch::Tensor> key_store, value_store;
  int64_t capacity = 0;

  // Fixed-shape mode (decode_stepper's fixed and CUDA-graph modes): when `slot` (int64 [1], on
  // the cache's device) is set, each forward feeds one token, which is written at position
  // slot[0] of the reserved stores, and attention reads the whole store under the caller's
  // [batch, capacity] attention_mask. Shapes then stay the same from step to step and nothing
  // is read back to the host, as a captured CUDA graph needs; the caller advances `slot`.
  torch::Tensor slot;

  void reserve(int64_t positions) { capacity = positions; }
  bool fixed() const { return slot.defined(); }
  int64_t length() const { return keys.empty() ? 0 : keys[0].size(2); }
  void clear() {
    keys.clear();
    values.clear();
    key_store.clear();
    value_store.clear();
    slot = torch::Tensor();
  }
  // Appends this step's keys and values [b, kv_heads, t, d] of `layer` and returns the whole
  // cached keys and values of that layer.
  std::pair<torch::Tensor, torch::Tensor> append(size_t layer, const torch::Tensor& k,
                                                 const torch::Tensor& v);

 private:
  std::pair<torch::Tensor, torch::Tensor> append_at_slot(size_t layer, const torch::Tensor& k,
                                                         const torch::Tensor& v);
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
  // false computes the base model alone, ignoring attached LoRA adapters (the PPO reference).
  bool adapters_enabled = true;
};

class qwen3_model {
 public:
  qwen3_model(qwen3_config cfg, qwen3_weights weights);

  // A HF model directory: config.json plus model.safetensors or a sharded index. The directory
  // becomes name_or_path().
  static qwen3_model load(const std::string& dir, torch::Dtype dtype = torch::kFloat32,
                          torch::Device device = torch::kCPU);

  // input_ids [batch, seq] (int64 or int32; seq may be 0 when a prefix is given) -> fp32 logits
  // [batch, p + seq, vocab], one row per prefix position and token. Padding positions get
  // finite logits of no meaning. Equal to lm_logits(forward_hidden(input_ids, options)).
  // Token ids are range-checked when they are on the CPU; ids already on a GPU are not (the
  // check would cost a host sync per call).
  torch::Tensor forward(const torch::Tensor& input_ids,
                        const qwen3_forward_options& options = {}) const;

  // The final-RMSNormed hidden states [batch, p + seq, hidden] in the weights' dtype (what the
  // lm_head and a value head read).
  torch::Tensor forward_hidden(const torch::Tensor& input_ids,
                               const qwen3_forward_options& options = {}) const;

  // hidden [..., hidden] -> fp32 logits [..., vocab].
  torch::Tensor lm_logits(const torch::Tensor& hidden) const;

  // Token embeddings [batch, seq, hidden] in the weights' dtype.
  torch::Tensor embed(const torch::Tensor& input_ids) const;

  // Every base weight once (lm_head is left out when it is the embedding), in checkpoint order.
  std::vector<torch::Tensor> parameters() const;
  // Sets requires_grad on every base weight (full-weight training) or clears it (frozen).
  void set_base_trainable(bool trainable);

  // Training mode turns LoRA dropout on (off by default). It applies only while autograd records
  // too, so generate() (under NoGradGuard) and no-grad evaluation never drop out.
  void set_training(bool training) { training_ = training; }
  bool training() const { return training_; }

  // Adds fresh adapters (A drawn from a CPU generator seeded with `seed`, in layer then module
  // order; B zeros, so outputs do not change) to the targeted linears of every layer and
  // freezes the base. Throws on a bad config, an unknown module or a second call.
  void attach_lora(const lora_config& config, uint64_t seed);
  bool has_lora() const { return lora_.has_value(); }
  const lora_config* lora() const { return lora_ ? &*lora_ : nullptr; }
  // Per layer; empty without LoRA.
  const std::vector<qwen3_layer_lora>& lora_layers() const { return lora_layers_; }
  // A then B of every adapter, in layer then module order (the order the adapters were drawn).
  std::vector<torch::Tensor> lora_parameters() const;

  const qwen3_config& config() const { return cfg_; }
  const qwen3_weights& weights() const { return weights_; }
  // Where the base weights came from (PEFT's base_model_name_or_path); "" when not known.
  const std::string& name_or_path() const { return name_or_path_; }
  void set_name_or_path(std::string name) { name_or_path_ = std::move(name); }

 private:
  torch::Tensor attention(const qwen3_layer_weights& w, const qwen3_layer_lora& a,
                          const torch::Tensor& x, const torch::Tensor& cos,
                          const torch::Tensor& sin, const torch::Tensor& allowed,
                          qwen3_kv_cache* cache, size_t layer) const;
  torch::Tensor mlp(const qwen3_layer_weights& w, const qwen3_layer_lora& a,
                    const torch::Tensor& x) const;
  torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight,
                       const lora_linear& adapter) const;
  torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight) const;

  qwen3_config cfg_;
  qwen3_weights weights_;
  std::optional<lora_config> lora_;
  std::vector<qwen3_layer_lora> lora_layers_;
  bool training_ = false;
  std::string name_or_path_;
};

}  // namespace sparserl
