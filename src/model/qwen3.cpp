#include "model/qwen3.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "model/torch_safetensors.h"
#include "sparse/error.h"
#include "sparse/quote_text.h"

namespace sparserl {

std::vector<qwen3_layer_tensor> qwen3_layer_tensors(const qwen3_config& c) {
  const int64_t h = c.hidden_size, q = c.num_attention_heads * c.head_dim;
  const int64_t kv = c.num_key_value_heads * c.head_dim, i = c.intermediate_size;
  using w = qwen3_layer_weights;
  return {
      {"input_layernorm.weight", {h}, &w::input_layernorm},
      {"self_attn.q_proj.weight", {q, h}, &w::q_proj},
      {"self_attn.k_proj.weight", {kv, h}, &w::k_proj},
      {"self_attn.v_proj.weight", {kv, h}, &w::v_proj},
      {"self_attn.o_proj.weight", {h, q}, &w::o_proj},
      {"self_attn.q_norm.weight", {c.head_dim}, &w::q_norm},
      {"self_attn.k_norm.weight", {c.head_dim}, &w::k_norm},
      {"post_attention_layernorm.weight", {h}, &w::post_attention_layernorm},
      {"mlp.gate_proj.weight", {i, h}, &w::gate_proj},
      {"mlp.up_proj.weight", {i, h}, &w::up_proj},
      {"mlp.down_proj.weight", {h, i}, &w::down_proj},
  };
}

const std::vector<qwen3_linear>& qwen3_linears() {
  using w = qwen3_layer_weights;
  using a = qwen3_layer_lora;
  static const std::vector<qwen3_linear> table = {
      {"q_proj", "self_attn", &w::q_proj, &a::q_proj},
      {"k_proj", "self_attn", &w::k_proj, &a::k_proj},
      {"v_proj", "self_attn", &w::v_proj, &a::v_proj},
      {"o_proj", "self_attn", &w::o_proj, &a::o_proj},
      {"gate_proj", "mlp", &w::gate_proj, &a::gate_proj},
      {"up_proj", "mlp", &w::up_proj, &a::up_proj},
      {"down_proj", "mlp", &w::down_proj, &a::down_proj},
  };
  return table;
}

namespace {

std::string layer_name(size_t layer, const char* suffix) {
  return "model.layers." + std::to_string(layer) + "." + suffix;
}

torch::Tensor read_tensor(const sharded_checkpoint& ckpt, const std::string& name,
                          const std::vector<int64_t>& shape, torch::Dtype dtype,
                          torch::Device device) {
  const std::string where = "checkpoint " + ckpt.dir() + ": tensor " + name;
  if (!ckpt.contains(name)) throw error(where + " is missing");
  const tensor_view& view = ckpt.get(name);
  if (view.shape != shape)
    throw error(where + " has shape " + shape_text(view.shape) + ", expected " + shape_text(shape));
  return read_float_tensor(view, where, dtype, device);
}

void check_shape(const torch::Tensor& t, const std::vector<int64_t>& shape,
                 const std::string& name) {
  if (!t.defined()) throw error("qwen3_model: weight " + name + " is not set");
  if (t.sizes() != c10::IntArrayRef(shape))
    throw error("qwen3_model: weight " + name + " has shape " + shape_text(t.sizes()) +
                ", expected " + shape_text(shape));
}

// Half-split rotary (transformers' rotate_half): x * cos + cat(-x2, x1) * sin.
torch::Tensor apply_rotary(const torch::Tensor& x, const torch::Tensor& cos,
                           const torch::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  const torch::Tensor x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  return x * cos + torch::cat({-x2, x1}, -1) * sin;
}

// Softmax attention over `allowed` keys; q [b, h, t, d], k/v [b, h, s, d], allowed [b, 1, t, s].
torch::Tensor softmax_attention(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, const torch::Tensor& allowed) {
#if TORCH_VERSION_MAJOR >= 2
  // The default scale is 1/sqrt(head_dim), as Qwen3 uses.
  return at::scaled_dot_product_attention(q, k, v, allowed, 0.0, false);
#else
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * scale;
  scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<float>::infinity());
  // Softmax in fp32 as transformers' eager attention does, then back to the value dtype.
  const torch::Tensor probs = torch::softmax(scores, -1, torch::kFloat32).to(v.scalar_type());
  return torch::matmul(probs, v);
#endif
}

void check_ids(const torch::Tensor& ids, const qwen3_config& cfg) {
  if (ids.dim() != 2)
    throw error("qwen3_model::forward: input_ids must be [batch, seq], got " +
                shape_text(ids.sizes()));
  if (ids.scalar_type() != torch::kInt64 && ids.scalar_type() != torch::kInt32)
    throw error("qwen3_model::forward: input_ids must be int64 or int32");
  // min/max of device ids would be a host sync per call; only host ids are checked.
  if (ids.numel() == 0 || !ids.device().is_cpu()) return;
  const int64_t lo = ids.min().item<int64_t>(), hi = ids.max().item<int64_t>();
  if (lo < 0 || hi >= cfg.vocab_size)
    throw error("qwen3_model::forward: token id " + std::to_string(lo < 0 ? lo : hi) +
                " is outside the vocabulary of " + std::to_string(cfg.vocab_size));
}

void check_dims(const torch::Tensor& t, std::vector<int64_t> shape, const char* what) {
  if (t.sizes() != c10::IntArrayRef(shape))
    throw error(std::string("qwen3_model::forward: ") + what + " has shape " +
                shape_text(t.sizes()) + ", expected " + shape_text(shape));
}

// Positions of the new tokens when the caller gave none (see qwen3_forward_options).
torch::Tensor default_positions(const torch::Tensor& mask, int64_t batch, int64_t past,
                                int64_t fresh, torch::Device device) {
  if (!mask.defined()) {
    const auto opts = torch::TensorOptions().dtype(torch::kInt64).device(device);
    return torch::arange(past, past + fresh, opts).unsqueeze(0).expand({batch, fresh});
  }
  const torch::Tensor m = mask.to(torch::kInt64);
  const torch::Tensor pos = (m.cumsum(-1) - 1).masked_fill(m == 0, 1);
  return pos.narrow(1, past, fresh);
}

// allowed[b, 0, i, j]: new token i (absolute index past + i) may attend key j. Causal and not
// padding; every token also sees itself, so a padding row never softmaxes over nothing (NaN).
torch::Tensor attention_allowed(const torch::Tensor& mask, int64_t batch, int64_t past,
                                int64_t fresh, torch::Device device) {
  const auto opts = torch::TensorOptions().dtype(torch::kInt64).device(device);
  const torch::Tensor query = torch::arange(past, past + fresh, opts).unsqueeze(1);
  const torch::Tensor key = torch::arange(0, past + fresh, opts).unsqueeze(0);
  torch::Tensor allowed = (key <= query).view({1, 1, fresh, past + fresh});
  if (mask.defined()) {
    const torch::Tensor real = (mask != 0).view({batch, 1, 1, past + fresh});
    allowed = torch::logical_or(torch::logical_and(allowed, real),
                                (key == query).view({1, 1, fresh, past + fresh}));
  }
  return allowed.expand({batch, 1, fresh, past + fresh});
}

}  // namespace

qwen3_weights load_qwen3_weights(const sharded_checkpoint& ckpt, const qwen3_config& cfg,
                                 torch::Dtype dtype, torch::Device device) {
  validate(cfg, "load_qwen3_weights");
  if (cfg.attention_bias)
    throw error("checkpoint " + ckpt.dir() + ": attention_bias is not supported by qwen3_model");
  const int64_t v = cfg.vocab_size, h = cfg.hidden_size;
  qwen3_weights w;
  w.embed_tokens = read_tensor(ckpt, "model.embed_tokens.weight", {v, h}, dtype, device);
  w.layers.resize(static_cast<size_t>(cfg.num_hidden_layers));
  const std::vector<qwen3_layer_tensor> table = qwen3_layer_tensors(cfg);
  for (size_t l = 0; l < w.layers.size(); ++l)
    for (const qwen3_layer_tensor& t : table)
      w.layers[l].*t.member = read_tensor(ckpt, layer_name(l, t.suffix), t.shape, dtype, device);
  w.norm = read_tensor(ckpt, "model.norm.weight", {h}, dtype, device);
  w.lm_head = cfg.tie_word_embeddings ? w.embed_tokens
                                      : read_tensor(ckpt, "lm_head.weight", {v, h}, dtype, device);
  return w;
}

qwen3_model::qwen3_model(qwen3_config cfg, qwen3_weights weights)
    : cfg_(std::move(cfg)), weights_(std::move(weights)) {
  validate(cfg_, "qwen3_model");
  const int64_t v = cfg_.vocab_size, h = cfg_.hidden_size;
  check_shape(weights_.embed_tokens, {v, h}, "model.embed_tokens.weight");
  if (weights_.layers.size() != static_cast<size_t>(cfg_.num_hidden_layers))
    throw error("qwen3_model: " + std::to_string(weights_.layers.size()) +
                " layers of weights for a config of " + std::to_string(cfg_.num_hidden_layers));
  const std::vector<qwen3_layer_tensor> table = qwen3_layer_tensors(cfg_);
  for (size_t l = 0; l < weights_.layers.size(); ++l)
    for (const qwen3_layer_tensor& t : table)
      check_shape(weights_.layers[l].*t.member, t.shape, layer_name(l, t.suffix));
  check_shape(weights_.norm, {h}, "model.norm.weight");
  check_shape(weights_.lm_head, {v, h}, "lm_head.weight");
  // Saving writes one tensor for a tied pair, so the pair must really be one tensor.
  if (cfg_.tie_word_embeddings && !weights_.lm_head.is_same(weights_.embed_tokens))
    throw error("qwen3_model: tie_word_embeddings is set but lm_head is not embed_tokens");
}

qwen3_model qwen3_model::load(const std::string& dir, torch::Dtype dtype, torch::Device device) {
  qwen3_config cfg = load_qwen3_config(dir + "/config.json");
  const sharded_checkpoint ckpt = load_sharded(dir);
  qwen3_weights weights = load_qwen3_weights(ckpt, cfg, dtype, device);
  qwen3_model model(std::move(cfg), std::move(weights));
  model.set_name_or_path(dir);
  return model;
}

std::vector<torch::Tensor> qwen3_model::parameters() const {
  std::vector<torch::Tensor> out{weights_.embed_tokens};
  const std::vector<qwen3_layer_tensor> table = qwen3_layer_tensors(cfg_);
  for (const qwen3_layer_weights& layer : weights_.layers)
    for (const qwen3_layer_tensor& t : table) out.push_back(layer.*t.member);
  out.push_back(weights_.norm);
  if (!weights_.lm_head.is_same(weights_.embed_tokens)) out.push_back(weights_.lm_head);
  return out;
}

void qwen3_model::set_base_trainable(bool trainable) {
  for (torch::Tensor& t : parameters()) t.requires_grad_(trainable);
}

void qwen3_model::attach_lora(const lora_config& config, uint64_t seed) {
  validate(config, "qwen3_model::attach_lora");
  if (lora_) throw error("qwen3_model::attach_lora: LoRA adapters are already attached");
  std::vector<const qwen3_linear*> targets;
  for (const std::string& name : config.target_modules) {
    const auto& all = qwen3_linears();
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const qwen3_linear& m) { return name == m.name; });
    if (it == all.end())
      throw error("qwen3_model::attach_lora: unknown target module " +
                  quote_text(name, name_quote_bytes) +
                  "; Qwen3 has q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj");
    targets.push_back(&*it);
  }
  // Drawn in table order (the pointers point into qwen3_linears()), whatever order the config
  // lists the modules in.
  std::sort(targets.begin(), targets.end());
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<qwen3_layer_lora> layers(weights_.layers.size());
  for (size_t l = 0; l < layers.size(); ++l)
    for (const qwen3_linear* m : targets) {
      const torch::Tensor& w = weights_.layers[l].*m->weight;
      layers[l].*m->adapter =
          make_lora_linear(w.size(0), w.size(1), config.rank, generator, w.device());
    }
  lora_layers_ = std::move(layers);
  lora_ = config;
  set_base_trainable(false);
}

std::vector<torch::Tensor> qwen3_model::lora_parameters() const {
  std::vector<torch::Tensor> out;
  for (const qwen3_layer_lora& layer : lora_layers_)
    for (const qwen3_linear& m : qwen3_linears()) {
      const lora_linear& a = layer.*m.adapter;
      if (!a.defined()) continue;
      out.push_back(a.a);
      out.push_back(a.b);
    }
  return out;
}

torch::Tensor qwen3_model::embed(const torch::Tensor& input_ids) const {
  check_ids(input_ids, cfg_);
  return torch::embedding(weights_.embed_tokens,
                          input_ids.to(weights_.embed_tokens.device(), torch::kInt64));
}

// transformers' Qwen3RMSNorm: normalise in fp32, cast back, then scale.
torch::Tensor qwen3_model::rms_norm(const torch::Tensor& x, const torch::Tensor& weight) const {
  const torch::Tensor xf = x.to(torch::kFloat32);
  const torch::Tensor var = xf.pow(2).mean(-1, /*keepdim=*/true);
  return weight * (xf * torch::rsqrt(var + cfg_.rms_norm_eps)).to(x.scalar_type());
}

torch::Tensor qwen3_model::linear(const torch::Tensor& x, const torch::Tensor& weight,
                                  const lora_linear& adapter) const {
  if (!adapter.defined()) return torch::linear(x, weight);
  const bool dropout = training_ && torch::GradMode::is_enabled();
  return lora_linear_forward(x, weight, adapter, lora_->scale(), lora_->dropout, dropout);
}

torch::Tensor qwen3_model::mlp(const qwen3_layer_weights& w, const qwen3_layer_lora& a,
                               const torch::Tensor& x) const {
  const torch::Tensor gate = torch::silu(linear(x, w.gate_proj, a.gate_proj));
  return linear(gate * linear(x, w.up_proj, a.up_proj), w.down_proj, a.down_proj);
}

std::pair<torch::Tensor, torch::Tensor> qwen3_kv_cache::append(size_t layer, const torch::Tensor& k,
                                                               const torch::Tensor& v) {
  const int64_t t = k.size(2);
  if (fixed()) return append_at_slot(layer, k, v);
  if (keys.size() <= layer) {  // the first forward (prefill)
    if (capacity > t) {
      std::vector<int64_t> shape = k.sizes().vec();
      shape[2] = capacity;
      // Zeros, not empty: the fixed-shape mode reads every slot, and a masked slot still enters
      // the sums as 0 x value, which is NaN when stale memory holds a NaN pattern.
      key_store.push_back(torch::zeros(shape, k.options()));
      value_store.push_back(torch::zeros(shape, v.options()));
      key_store.back().narrow(2, 0, t).copy_(k);
      value_store.back().narrow(2, 0, t).copy_(v);
      keys.push_back(key_store.back().narrow(2, 0, t));
      values.push_back(value_store.back().narrow(2, 0, t));
    } else {
      keys.push_back(k);
      values.push_back(v);
    }
    return {keys[layer], values[layer]};
  }
  const int64_t past = keys[layer].size(2);
  if (layer < key_store.size() && past + t <= key_store[layer].size(2)) {
    key_store[layer].narrow(2, past, t).copy_(k);
    value_store[layer].narrow(2, past, t).copy_(v);
    keys[layer] = key_store[layer].narrow(2, 0, past + t);
    values[layer] = value_store[layer].narrow(2, 0, past + t);
  } else {
    keys[layer] = torch::cat({keys[layer], k}, 2);
    values[layer] = torch::cat({values[layer], v}, 2);
  }
  return {keys[layer], values[layer]};
}

std::pair<torch::Tensor, torch::Tensor> qwen3_kv_cache::append_at_slot(size_t layer,
                                                                       const torch::Tensor& k,
                                                                       const torch::Tensor& v) {
  if (layer >= key_store.size() || k.size(2) != 1)
    throw error(
        "qwen3_kv_cache: the fixed-shape mode needs reserved stores (reserve, then a "
        "prefill) and one token per step");
  key_store[layer].index_copy_(2, slot, k);
  value_store[layer].index_copy_(2, slot, v);
  keys[layer] = key_store[layer];
  values[layer] = value_store[layer];
  return {key_store[layer], value_store[layer]};
}

torch::Tensor qwen3_model::attention(const qwen3_layer_weights& w, const qwen3_layer_lora& a,
                                     const torch::Tensor& x, const torch::Tensor& cos,
                                     const torch::Tensor& sin, const torch::Tensor& allowed,
                                     qwen3_kv_cache* cache, size_t layer) const {
  const int64_t b = x.size(0), t = x.size(1), d = cfg_.head_dim;
  const int64_t heads = cfg_.num_attention_heads, kv_heads = cfg_.num_key_value_heads;
  // q_norm / k_norm normalise each head's vector before rotary, as Qwen3 does.
  torch::Tensor q = rms_norm(linear(x, w.q_proj, a.q_proj).view({b, t, heads, d}), w.q_norm);
  torch::Tensor k = rms_norm(linear(x, w.k_proj, a.k_proj).view({b, t, kv_heads, d}), w.k_norm);
  torch::Tensor v = linear(x, w.v_proj, a.v_proj).view({b, t, kv_heads, d}).transpose(1, 2);
  q = apply_rotary(q.transpose(1, 2), cos, sin);
  k = apply_rotary(k.transpose(1, 2), cos, sin);
  if (cache != nullptr) std::tie(k, v) = cache->append(layer, k, v);
  // Grouped-query attention: query head i uses kv head i / groups. The `groups` query heads of a
  // kv head become extra query rows of that head ([b, kv_heads, groups * t, d]), so the keys and
  // values are read in place instead of copied `groups` times (that copy of the whole cache cost
  // more than the weights per decode step at batch 64).
  const int64_t groups = heads / kv_heads;
  const int64_t span = k.size(2);
  const torch::Tensor grouped_q = q.reshape({b, kv_heads, groups * t, d});
  const torch::Tensor grouped_allowed =
      allowed.unsqueeze(2).expand({b, 1, groups, t, span}).reshape({b, 1, groups * t, span});
  const torch::Tensor out =
      softmax_attention(grouped_q, k, v, grouped_allowed).reshape({b, heads, t, d});
  return linear(out.transpose(1, 2).reshape({b, t, heads * d}), w.o_proj, a.o_proj);
}

torch::Tensor qwen3_model::forward(const torch::Tensor& input_ids,
                                   const qwen3_forward_options& options) const {
  return lm_logits(forward_hidden(input_ids, options));
}

torch::Tensor qwen3_model::lm_logits(const torch::Tensor& hidden) const {
  return torch::linear(hidden.to(weights_.lm_head.scalar_type()), weights_.lm_head)
      .to(torch::kFloat32);
}

torch::Tensor qwen3_model::forward_hidden(const torch::Tensor& input_ids,
                                          const qwen3_forward_options& options) const {
  torch::Tensor x = embed(input_ids);
  const int64_t batch = x.size(0), h = cfg_.hidden_size;
  const torch::Device device = x.device();
  if (options.prefix_embeds.defined()) {
    const torch::Tensor& p = options.prefix_embeds;
    check_dims(p, {batch, p.dim() == 3 ? p.size(1) : -1, h}, "prefix_embeds");
    x = torch::cat({p.to(device, x.scalar_type()), x}, 1);
  }
  qwen3_kv_cache* cache = options.cache;
  const int64_t past = cache != nullptr ? cache->length() : 0, fresh = x.size(1);
  if (cache != nullptr && past > 0 && cache->keys[0].size(0) != batch)
    throw error("qwen3_model::forward: the KV cache holds batch " +
                std::to_string(cache->keys[0].size(0)) + ", the input has " +
                std::to_string(batch));
  const bool fixed = cache != nullptr && cache->fixed();
  if (fixed && (fresh != 1 || !options.attention_mask.defined() || !options.position_ids.defined()))
    throw error(
        "qwen3_model::forward: a fixed-shape KV cache takes one token per step with an "
        "attention_mask over its capacity and explicit position_ids");
  // Keys attention sees: the cached ones and the new ones, or the whole store when fixed.
  const int64_t span = fixed ? cache->capacity : past + fresh;
  torch::Tensor mask;
  if (options.attention_mask.defined()) {
    check_dims(options.attention_mask, {batch, span}, "attention_mask");
    mask = options.attention_mask.to(device);
  }
  torch::Tensor positions = options.position_ids;
  if (positions.defined())
    check_dims(positions, {batch, fresh}, "position_ids");
  else
    positions = default_positions(mask, batch, past, fresh, device);

  // Rotary tables as transformers builds them: inv_freq = 1 / theta^(2i / d), in fp32.
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  const torch::Tensor inv_freq =
      1.0 / torch::pow(cfg_.rope_theta, torch::arange(0, cfg_.head_dim, 2, f32) / cfg_.head_dim);
  const torch::Tensor freqs = positions.to(device, torch::kFloat32).unsqueeze(-1) * inv_freq;
  const torch::Tensor angles = torch::cat({freqs, freqs}, -1).unsqueeze(1);  // [b, 1, t, d]
  const torch::Tensor cos = angles.cos().to(x.scalar_type());
  const torch::Tensor sin = angles.sin().to(x.scalar_type());
  // Fixed: the mask alone says which slots hold this sequence's real tokens, the new one included.
  const torch::Tensor allowed = fixed ? (mask != 0).view({batch, 1, 1, span})
                                      : attention_allowed(mask, batch, past, fresh, device);

  const bool adapters = options.adapters_enabled && !lora_layers_.empty();
  const qwen3_layer_lora none;
  for (size_t l = 0; l < weights_.layers.size(); ++l) {
    const qwen3_layer_weights& w = weights_.layers[l];
    const qwen3_layer_lora& a = adapters ? lora_layers_[l] : none;
    x = x + attention(w, a, rms_norm(x, w.input_layernorm), cos, sin, allowed, cache, l);
    x = x + mlp(w, a, rms_norm(x, w.post_attention_layernorm));
  }
  return rms_norm(x, weights_.norm);
}

}  // namespace sparserl
