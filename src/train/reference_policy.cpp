#include "train/reference_policy.h"

#include <torch/types.h>

namespace sparserl::train {

std::unique_ptr<qwen3_model> make_reference_model(const qwen3_model& m) {
  if (m.has_lora()) return nullptr;
  qwen3_weights w = m.weights();
  auto frozen = [](const torch::Tensor& t) { return t.detach().clone(); };
  w.embed_tokens = frozen(w.embed_tokens);
  w.norm = frozen(w.norm);
  w.lm_head = m.config().tie_word_embeddings ? w.embed_tokens : frozen(w.lm_head);
  for (auto& layer : w.layers)
    for (const qwen3_layer_tensor& t : qwen3_layer_tensors(m.config()))
      layer.*t.member = frozen(layer.*t.member);
  return std::make_unique<qwen3_model>(m.config(), std::move(w));
}

}  // namespace sparserl::train
