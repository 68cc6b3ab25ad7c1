// The pre-allocated KV cache: decoding into reserved storage gives exactly the logits of the
// growing (concatenating) cache, writes in place, and falls back to growing past its capacity.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "model/qwen3.h"
#include "model/qwen3_init.h"

namespace sparserl {
namespace {

std::vector<torch::Tensor> decode(const qwen3_model& m, const torch::Tensor& ids, int64_t prefill,
                                  qwen3_kv_cache& cache, std::vector<const void*>* stores) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> out;
  qwen3_forward_options o;
  o.cache = &cache;
  out.push_back(m.forward(ids.narrow(1, 0, prefill), o));
  for (int64_t j = prefill; j < ids.size(1); ++j) {
    out.push_back(m.forward(ids.narrow(1, j, 1), o));
    if (stores && !cache.key_store.empty()) stores->push_back(cache.key_store[0].data_ptr());
  }
  return out;
}

TEST(kv_cache, reserved_storage_matches_the_growing_cache_and_is_written_in_place) {
  const qwen3_config cfg = tiny_qwen3_config(97);
  const qwen3_model m(cfg, random_qwen3_weights(cfg, 5));
  const torch::Tensor ids = torch::randint(0, 97, {2, 12}, torch::kInt64);
  qwen3_kv_cache growing, reserved, small;
  reserved.reserve(12);
  small.reserve(8);  // too small: the last steps grow it
  std::vector<const void*> stores;
  const auto a = decode(m, ids, 5, growing, nullptr);
  const auto b = decode(m, ids, 5, reserved, &stores);
  const auto c = decode(m, ids, 5, small, nullptr);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i], b[i])) << "step " << i;
    EXPECT_TRUE(torch::equal(a[i], c[i])) << "step " << i;
  }
  EXPECT_EQ(reserved.length(), 12);
  EXPECT_EQ(small.length(), 12);
  ASSERT_EQ(reserved.key_store.size(), static_cast<size_t>(cfg.num_hidden_layers));
  for (const void* p : stores) EXPECT_EQ(p, stores.front());  // never reallocated
  EXPECT_EQ(reserved.keys[0].data_ptr(), reserved.key_store[0].data_ptr());
}

}  // namespace
}  // namespace sparserl
