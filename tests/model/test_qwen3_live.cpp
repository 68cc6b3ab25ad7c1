// Parity with live transformers on the GPU machine: tools/decode_bench.py writes a random
// Qwen3-8B-shaped model and transformers' bf16 logits for it (expected.safetensors); this test
// loads the same directory in bf16 on the GPU and compares. Skips unless SPARSERL_LIVE_QWEN3_DIR
// names such a directory and a GPU is there. (The fp32 parity fixtures are in test_qwen3.cpp.)
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdlib>

#include "model/qwen3.h"
#include "model/tensor_file.h"

namespace sparserl {
namespace {

TEST(qwen3_live, bf16_logits_match_transformers_on_the_gpu) {
  const char* dir = std::getenv("SPARSERL_LIVE_QWEN3_DIR");
  if (!dir || !torch::cuda::is_available())
    GTEST_SKIP() << "needs SPARSERL_LIVE_QWEN3_DIR and a GPU";
  const loaded_tensors expected = load_tensor_file(std::string(dir) + "/expected.safetensors");
  const torch::Tensor ids = expected.tensors.at("ids");
  const torch::Tensor want = expected.tensors.at("logits");
  const qwen3_model model = qwen3_model::load(dir, torch::kBFloat16, torch::kCUDA);
  torch::NoGradGuard no_grad;
  const torch::Tensor got = model.forward(ids.to(torch::kCUDA)).to(torch::kCPU);
  ASSERT_EQ(got.sizes(), want.sizes());
  const double rel = ((got - want).norm() / want.norm()).item<double>();
  const double agree =
      (got.argmax(-1) == want.argmax(-1)).to(torch::kFloat32).mean().item<double>();
  std::cout << "live parity: relative L2 error " << rel << ", top-1 agreement " << agree << "\n";
  // Both sides round through bf16 in different kernels: a few 1e-3 typical, far from a wrong op.
  EXPECT_LT(rel, 3e-2);
  EXPECT_GE(agree, 0.95);
}

}  // namespace
}  // namespace sparserl
