// value_head: one fp32 value per position from hidden states of any float dtype, gradients on
// its weight and bias, seeded init, and a strict safetensors round trip under TRL's names.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "model/safetensors.h"
#include "model/torch_safetensors.h"
#include "model/value_head.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;

std::string scratch_file(const std::string& name) {
  return (fs::temp_directory_path() /
          ("sparserl_value_head_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(value_head, one_fp32_value_per_position) {
  const value_head head(32, 1);
  const torch::Tensor hidden = torch::randn({3, 5, 32});
  const torch::Tensor values = head.forward(hidden);
  EXPECT_EQ(values.sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(values.scalar_type(), torch::kFloat32);
  // The same as the linear map written out.
  const torch::Tensor want = (hidden * head.weight()[0]).sum(-1) + head.bias()[0];
  EXPECT_LE((values - want).abs().max().item<double>(), 1e-5);
  // bf16 hidden states (a bf16 policy) are read in fp32.
  const torch::Tensor from_bf16 = head.forward(hidden.to(torch::kBFloat16));
  EXPECT_EQ(from_bf16.scalar_type(), torch::kFloat32);
  EXPECT_LE((from_bf16 - head.forward(hidden.to(torch::kBFloat16).to(torch::kFloat32)))
                .abs()
                .max()
                .item<double>(),
            1e-6);
}

TEST(value_head, gradients_reach_weight_bias_and_hidden) {
  const value_head head(16, 2);
  const torch::Tensor hidden = torch::randn({2, 4, 16}).requires_grad_(true);
  head.forward(hidden).pow(2).sum().backward();
  for (const torch::Tensor& p : head.parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_GT(p.grad().abs().sum().item<double>(), 0.0);
  }
  ASSERT_TRUE(hidden.grad().defined());  // and on into the policy's hidden states
}

TEST(value_head, init_is_seeded_like_nn_linear) {
  const value_head a(64, 5), b(64, 5), c(64, 6);
  EXPECT_TRUE(torch::equal(a.weight(), b.weight()));
  EXPECT_TRUE(torch::equal(a.bias(), b.bias()));
  EXPECT_FALSE(torch::equal(a.weight(), c.weight()));
  EXPECT_LE(a.weight().abs().max().item<double>(), 1.0 / 8.0);  // U(-1/sqrt(64), 1/sqrt(64))
  EXPECT_LE(a.bias().abs().max().item<double>(), 1.0 / 8.0);
  EXPECT_EQ(a.weight().sizes(), (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(a.bias().sizes(), (std::vector<int64_t>{1}));
  EXPECT_THROW(value_head(0, 1), error);
}

TEST(value_head, save_load_round_trip) {
  const std::string path = scratch_file("round_trip.safetensors");
  const value_head saved(24, 1);
  saved.save(path);
  const safetensors_file file(path);
  EXPECT_EQ(file.names(),
            (std::vector<std::string>{"v_head.summary.bias", "v_head.summary.weight"}));
  EXPECT_EQ(file.get("v_head.summary.weight").dtype, st_dtype::f32);
  value_head loaded(24, 2);
  const void* before = loaded.weight().data_ptr();
  loaded.load(path);
  EXPECT_EQ(loaded.weight().data_ptr(), before);  // in place: optimizer references stay valid
  EXPECT_TRUE(loaded.weight().requires_grad());
  EXPECT_TRUE(torch::equal(loaded.weight(), saved.weight()));
  EXPECT_TRUE(torch::equal(loaded.bias(), saved.bias()));
  const torch::Tensor hidden = torch::randn({1, 3, 24});
  EXPECT_TRUE(torch::equal(loaded.forward(hidden), saved.forward(hidden)));
  fs::remove(path);
}

std::string load_error(const std::string& path, int64_t hidden) {
  value_head head(hidden, 0);
  try {
    head.load(path);
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

TEST(value_head, bad_files_are_named) {
  const std::string path = scratch_file("bad.safetensors");
  value_head(24, 1).save(path);
  std::string message = load_error(path, 32);  // a head for another hidden size
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("v_head.summary.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("[1, 24]"), std::string::npos) << message;
  const torch::Tensor w = torch::zeros({1, 24});
  write_torch_safetensors(path, {{"v_head.summary.weight", w}});
  message = load_error(path, 24);
  EXPECT_NE(message.find("v_head.summary.bias is missing"), std::string::npos) << message;
  write_torch_safetensors(path, {{"v_head.summary.weight", w},
                                 {"v_head.summary.bias", torch::zeros({1})},
                                 {"score.weight", w}});
  message = load_error(path, 24);
  EXPECT_NE(message.find("score.weight"), std::string::npos) << message;
  write_torch_safetensors(path, {{"v_head.summary.weight", w.to(torch::kInt32)},
                                 {"v_head.summary.bias", torch::zeros({1})}});
  message = load_error(path, 24);
  EXPECT_NE(message.find("I32"), std::string::npos) << message;
  fs::remove(path);
  message = load_error(path, 24);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_THROW(value_head(8, 0).forward(torch::zeros({2, 3, 9})), error);
}

}  // namespace
}  // namespace sparserl
