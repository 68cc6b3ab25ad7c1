// The matrix projector: output shape and the MLP it computes, seeded initialisation, gradients,
// save / load round trip, refusal of files that do not fit, and its output as the Qwen3 prefix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "model/matrix_projector.h"
#include "model/qwen3.h"
#include "model/safetensors.h"
#include "sparse/error.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

matrix_projector_options small_options(uint64_t seed = 3) {
  matrix_projector_options o;
  o.encoding.max_nnz = 16;
  o.encoding.dim = 10;
  o.hidden = 24;
  o.seed = seed;
  return o;
}

csr_matrix generated(const std::string& family, int32_t rows) {
  generator_spec spec;
  spec.family = family;
  spec.rows = rows;
  return generate_matrix(spec);
}

std::vector<matrix_encoding> encodings(const matrix_encoding_options& o) {
  return {encode_matrix(generated("banded", 500), o), encode_matrix(generated("rmat", 512), o),
          encode_matrix(csr_from_triplets(7, 9, {}), o)};
}

std::vector<const matrix_encoding*> pointers(const std::vector<matrix_encoding>& e) {
  std::vector<const matrix_encoding*> out;
  for (const matrix_encoding& x : e) out.push_back(&x);
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const error& e) {
    return e.what();
  }
  return "no error";
}

bool same_parameters(const matrix_projector& a, const matrix_projector& b) {
  const auto pa = a.parameters(), pb = b.parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    if (!torch::equal(pa[i], pb[i])) return false;
  return true;
}

class matrix_projector_files : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sparserl_projector_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  std::string dir_;
};

TEST(matrix_projector, output_is_the_mlp_of_every_token) {
  const matrix_projector p(small_options());
  const std::vector<matrix_encoding> e = encodings(p.encoding_options());
  const torch::Tensor out = p.forward(pointers(e));
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{3, 17, 24}));
  EXPECT_EQ(out.scalar_type(), torch::kFloat32);

  // fc2(gelu(fc1(x))) with GELU written out: 0.5 x (1 + erf(x / sqrt 2)).
  const auto w = p.parameters();
  const torch::Tensor x = p.stack(pointers(e));
  const torch::Tensor pre = torch::matmul(x, w[0].t()) + w[1];
  const torch::Tensor act = 0.5 * pre * (1 + torch::erf(pre / std::sqrt(2.0)));
  const torch::Tensor expected = torch::matmul(act, w[2].t()) + w[3];
  EXPECT_TRUE(torch::allclose(out, expected, 1e-5, 1e-6));
  EXPECT_FALSE(torch::allclose(out[0], out[1]));  // different matrices, different prefixes
}

TEST(matrix_projector, dtype_follows_to) {
  matrix_projector p(small_options());
  const std::vector<matrix_encoding> e = encodings(p.encoding_options());
  const torch::Tensor f32 = p.forward(pointers(e));
  p.to(torch::kFloat64, torch::kCPU);
  const torch::Tensor f64 = p.forward(pointers(e));
  EXPECT_EQ(f64.scalar_type(), torch::kFloat64);
  EXPECT_TRUE(torch::allclose(f64.to(torch::kFloat32), f32, 1e-5, 1e-6));
  p.to(torch::kBFloat16, torch::kCPU);
  EXPECT_EQ(p.forward(pointers(e)).scalar_type(), torch::kBFloat16);
  for (const torch::Tensor& t : p.parameters()) EXPECT_TRUE(t.requires_grad() && t.is_leaf());
}

TEST(matrix_projector, runs_on_the_gpu_in_bfloat16) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  matrix_projector p(small_options());
  const std::vector<matrix_encoding> e = encodings(p.encoding_options());
  const torch::Tensor cpu = p.forward(pointers(e));
  p.to(torch::kBFloat16, torch::kCUDA);
  const torch::Tensor gpu = p.forward(pointers(e));
  EXPECT_TRUE(gpu.is_cuda());
  EXPECT_EQ(gpu.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::allclose(gpu.to(torch::kCPU, torch::kFloat32), cpu, 5e-2, 5e-2));
}

TEST(matrix_projector, initialisation_is_seeded_and_bounded) {
  const matrix_projector a(small_options(3)), b(small_options(3)), c(small_options(4));
  EXPECT_TRUE(same_parameters(a, b));
  EXPECT_FALSE(same_parameters(a, c));
  const auto w = a.parameters();
  EXPECT_LE(w[0].abs().max().item<double>(), 1 / std::sqrt(30.0));  // fan_in = 3 * dim
  EXPECT_LE(w[2].abs().max().item<double>(), 1 / std::sqrt(24.0));  // fan_in = hidden
  EXPECT_GT(w[0].abs().max().item<double>(), 0.9 / std::sqrt(30.0));
}

TEST(matrix_projector, gradients_reach_every_parameter) {
  const matrix_projector p(small_options());
  const std::vector<matrix_encoding> e = encodings(p.encoding_options());
  p.forward(pointers(e)).pow(2).mean().backward();
  for (const torch::Tensor& t : p.parameters()) {
    ASSERT_TRUE(t.grad().defined());
    EXPECT_GT(t.grad().abs().sum().item<double>(), 0);
  }
}

TEST(matrix_projector, feeds_the_qwen3_decoder_as_prefix) {
  const qwen3_model model =
      qwen3_model::load(std::string(SPARSERL_SOURCE_DIR) + "/tests/model/fixtures/qwen3_gqa");
  matrix_projector_options o = small_options();
  o.hidden = model.config().hidden_size;
  const matrix_projector p(o);
  const std::vector<matrix_encoding> e = encodings(p.encoding_options());
  qwen3_forward_options forward;
  forward.prefix_embeds = p.forward(pointers(e));
  const torch::Tensor ids = torch::tensor({1, 2, 3, 4, 5, 6}, torch::kInt64).reshape({3, 2});
  const torch::Tensor logits = model.forward(ids, forward);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{3, 17 + 2, model.config().vocab_size}));
  logits.select(1, -1).logsumexp(-1).sum().backward();
  EXPECT_GT(p.parameters()[0].grad().abs().sum().item<double>(), 0);
}

TEST(matrix_projector, refuses_encodings_of_other_options) {
  const matrix_projector p(small_options());
  matrix_encoding_options other = p.encoding_options();
  other.max_nnz = 8;
  const matrix_encoding e = encode_matrix(generated("banded", 100), other);
  EXPECT_THAT(error_of([&] { p.forward({&e}); }),
              HasSubstr("batch item 0 has 9 tokens of 30 features; this projector takes 17"));
  EXPECT_THAT(error_of([&] { p.forward(std::vector<const matrix_encoding*>{}); }),
              HasSubstr("empty batch"));
  EXPECT_THAT(error_of([&] {
                p.forward(torch::zeros({2, 17, 31}));
              }),
              HasSubstr("features must be [batch, 17, 30], got [2, 17, 31]"));
}

TEST_F(matrix_projector_files, save_then_load_round_trips) {
  matrix_projector_options o = small_options();
  o.encoding.base = 1234.5678;  // a non-default encoding comes back too
  matrix_projector saved(o);
  {  // train one step so the file holds other than the initial weights
    const std::vector<matrix_encoding> e = encodings(saved.encoding_options());
    saved.forward(pointers(e)).sum().backward();
    torch::NoGradGuard no_grad;
    for (torch::Tensor& t : saved.parameters()) t.sub_(0.01 * t.grad());
  }
  saved.save(path("projector.safetensors"));

  const matrix_projector loaded = matrix_projector::from_file(path("projector.safetensors"));
  EXPECT_EQ(loaded.encoding_options().max_nnz, 16);
  EXPECT_EQ(loaded.encoding_options().dim, 10);
  EXPECT_EQ(loaded.encoding_options().base, 1234.5678);
  EXPECT_EQ(loaded.hidden(), 24);
  EXPECT_TRUE(same_parameters(saved, loaded));
  const std::vector<matrix_encoding> e = encodings(loaded.encoding_options());
  EXPECT_TRUE(torch::equal(saved.forward(pointers(e)), loaded.forward(pointers(e))));

  o.seed = 99;
  matrix_projector other(o);
  ASSERT_FALSE(same_parameters(saved, other));
  other.load(path("projector.safetensors"));
  EXPECT_TRUE(same_parameters(saved, other));

  const safetensors_file file(path("projector.safetensors"));
  EXPECT_EQ(file.names(), (std::vector<std::string>{"projector.fc1.bias", "projector.fc1.weight",
                                                    "projector.fc2.bias", "projector.fc2.weight"}));
  EXPECT_EQ(file.get("projector.fc1.weight").shape, (std::vector<int64_t>{24, 30}));
  EXPECT_EQ(file.metadata().at("format"), "pt");
}

TEST_F(matrix_projector_files, load_refuses_a_file_that_does_not_fit) {
  matrix_projector(small_options()).save(path("dim10.safetensors"));
  matrix_projector_options wider = small_options();
  wider.encoding.dim = 16;
  matrix_projector p(wider);
  EXPECT_THAT(error_of([&] { p.load(path("dim10.safetensors")); }),
              HasSubstr("does not fit this projector: dim 10 in the file, 16 here"));
  matrix_projector_options taller = small_options();
  taller.hidden = 32;
  matrix_projector q(taller);
  EXPECT_THAT(error_of([&] { q.load(path("dim10.safetensors")); }),
              HasSubstr("hidden 24 in the file, 32 here"));
}

TEST_F(matrix_projector_files, from_file_refuses_malformed_files) {
  const std::vector<float> zeros(24 * 30, 0.0f);
  auto write = [&](const std::string& name, const std::vector<int64_t>& fc1_shape,
                   const std::map<std::string, std::string>& metadata) {
    std::vector<tensor_data> tensors = {
        {"projector.fc1.weight", st_dtype::f32, fc1_shape, zeros.data(),
         static_cast<size_t>(shape_numel(fc1_shape)) * 4},
        {"projector.fc1.bias", st_dtype::f32, {24}, zeros.data(), 24 * 4},
        {"projector.fc2.weight", st_dtype::f32, {24, 24}, zeros.data(), 24 * 24 * 4},
        {"projector.fc2.bias", st_dtype::f32, {24}, zeros.data(), 24 * 4}};
    write_safetensors(path(name), tensors, metadata);
    return path(name);
  };
  const std::string good_meta =
      R"({"format_version":1,"max_nnz":16,"dim":10,"base":10000.0,"feature_dim":30,)"
      R"("hidden":24,"seed":3})";
  EXPECT_NO_THROW(matrix_projector::from_file(
      write("good.safetensors", {24, 30}, {{"sparserl.matrix_projector", good_meta}})));
  EXPECT_THAT(error_of([&] {
                matrix_projector::from_file(write("shape.safetensors", {24, 12},
                                                  {{"sparserl.matrix_projector", good_meta}}));
              }),
              HasSubstr("tensor projector.fc1.weight has shape [24, 12], expected [24, 30]"));
  EXPECT_THAT(error_of([&] {
                matrix_projector::from_file(write("bare.safetensors", {24, 30}, {}));
              }),
              HasSubstr("no \"sparserl.matrix_projector\" metadata entry"));
  EXPECT_THAT(error_of([&] {
                matrix_projector::from_file(write(
                    "odd.safetensors", {24, 30},
                    {{"sparserl.matrix_projector", R"({"format_version":1,"max_nnz":16,"dim":7,)"
                                                   R"("base":1e4,"feature_dim":21,"hidden":24,)"
                                                   R"("seed":0})"}}));
              }),
              HasSubstr("dim must be even"));
  EXPECT_THAT(error_of([&] { matrix_projector::from_file(path("missing.safetensors")); }),
              HasSubstr("cannot open safetensors file"));
}

}  // namespace
}  // namespace sparserl
