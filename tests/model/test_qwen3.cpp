// Parity of qwen3_model with transformers' Qwen3ForCausalLM on the tiny random checkpoints (and
// reference logits) that tools/make_qwen3_fixtures.py writes, plus loader and input errors.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/qwen3.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;

constexpr double parity_tolerance = 1e-4;  // max |a - b| / max |b|

std::string fixture_dir(const std::string& name) {
  return std::string(SPARSERL_SOURCE_DIR) + "/tests/model/fixtures/" + name;
}

std::map<std::string, torch::Tensor> load_expected(const std::string& name) {
  const safetensors_file file(fixture_dir(name) + "/expected.safetensors");
  std::map<std::string, torch::Tensor> out;
  for (const std::string& key : file.names()) {
    const tensor_view& v = file.get(key);
    const torch::Dtype dtype = v.dtype == st_dtype::i64 ? torch::kInt64 : torch::kFloat32;
    EXPECT_TRUE(v.dtype == st_dtype::i64 || v.dtype == st_dtype::f32) << key;
    out[key] = torch::from_blob(const_cast<void*>(v.data), v.shape, dtype).clone();
  }
  return out;
}

double max_rel_error(const torch::Tensor& actual, const torch::Tensor& expected) {
  EXPECT_EQ(actual.sizes(), expected.sizes());
  return ((actual - expected).abs().max() / expected.abs().max()).item<double>();
}

// Logits of the real (mask == 1) positions only: padding rows have no meaning.
torch::Tensor real_rows(const torch::Tensor& logits, const torch::Tensor& mask) {
  return logits.index({mask.to(torch::kBool)});
}

// The model's weights under their HF names, as a checkpoint holds them.
std::map<std::string, torch::Tensor> named_weights(const qwen3_model& model) {
  const qwen3_weights& w = model.weights();
  std::map<std::string, torch::Tensor> out{{"model.embed_tokens.weight", w.embed_tokens},
                                           {"model.norm.weight", w.norm}};
  if (!model.config().tie_word_embeddings) out["lm_head.weight"] = w.lm_head;
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const qwen3_layer_weights& L = w.layers[l];
    out[p + "input_layernorm.weight"] = L.input_layernorm;
    out[p + "self_attn.q_proj.weight"] = L.q_proj;
    out[p + "self_attn.k_proj.weight"] = L.k_proj;
    out[p + "self_attn.v_proj.weight"] = L.v_proj;
    out[p + "self_attn.o_proj.weight"] = L.o_proj;
    out[p + "self_attn.q_norm.weight"] = L.q_norm;
    out[p + "self_attn.k_norm.weight"] = L.k_norm;
    out[p + "post_attention_layernorm.weight"] = L.post_attention_layernorm;
    out[p + "mlp.gate_proj.weight"] = L.gate_proj;
    out[p + "mlp.up_proj.weight"] = L.up_proj;
    out[p + "mlp.down_proj.weight"] = L.down_proj;
  }
  return out;
}

// A scratch checkpoint directory: `source`'s config.json plus the given tensors (F32 or I32).
class scratch_checkpoint {
 public:
  scratch_checkpoint(const std::string& source, const std::map<std::string, torch::Tensor>& ts) {
    dir_ = fs::temp_directory_path() /
           ("sparserl_qwen3_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::create_directories(dir_);
    fs::copy_file(fixture_dir(source) + "/config.json", dir_ / "config.json");
    std::vector<torch::Tensor> keep;
    std::vector<tensor_data> data;
    for (const auto& [name, t] : ts) {
      keep.push_back(t.contiguous());
      const bool f32 = t.scalar_type() == torch::kFloat32;
      data.push_back({name, f32 ? st_dtype::f32 : st_dtype::i32, keep.back().sizes().vec(),
                      keep.back().data_ptr(), keep.back().nbytes()});
    }
    write_safetensors((dir_ / "model.safetensors").string(), data);
  }
  ~scratch_checkpoint() { fs::remove_all(dir_); }
  std::string dir() const { return dir_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
};

// The error message of loading `dir`, or "" if it loaded.
std::string load_error(const std::string& dir) {
  try {
    qwen3_model::load(dir);
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

class qwen3_parity : public ::testing::TestWithParam<const char*> {};

TEST_P(qwen3_parity, logits_match_transformers) {
  const qwen3_model model = qwen3_model::load(fixture_dir(GetParam()));
  auto expected = load_expected(GetParam());
  const torch::Tensor logits = model.forward(expected["ids"]);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{2, 7, model.config().vocab_size}));
  EXPECT_EQ(logits.scalar_type(), torch::kFloat32);
  const double rel = max_rel_error(logits, expected["logits"]);
  std::printf("[ %s ] max relative logit error vs transformers: %.3g\n", GetParam(), rel);
  EXPECT_LE(rel, parity_tolerance);
}

TEST_P(qwen3_parity, left_padded_batch_matches_transformers) {
  const qwen3_model model = qwen3_model::load(fixture_dir(GetParam()));
  auto expected = load_expected(GetParam());
  const torch::Tensor mask = expected["padded_mask"];
  qwen3_forward_options opts;
  opts.attention_mask = mask;
  opts.position_ids = expected["padded_positions"];
  const torch::Tensor given = model.forward(expected["padded_ids"], opts);
  const torch::Tensor want = real_rows(expected["padded_logits"], mask);
  const double rel = max_rel_error(real_rows(given, mask), want);
  std::printf("[ %s ] padded batch max relative error: %.3g\n", GetParam(), rel);
  EXPECT_LE(rel, parity_tolerance);
  // Without explicit positions they follow from the mask the way generate() derives them.
  opts.position_ids = torch::Tensor();
  EXPECT_LE(max_rel_error(real_rows(model.forward(expected["padded_ids"], opts), mask), want),
            parity_tolerance);
  // The padding really is masked: other pad token ids change nothing in the real rows.
  torch::Tensor other = expected["padded_ids"].clone();
  other.index_put_({mask == 0}, 5);
  EXPECT_LE(max_rel_error(real_rows(model.forward(other, opts), mask), want), parity_tolerance);
}

// Decoding a token at a time (after a prompt chunk) through the KV cache gives the logits of the
// full-sequence forward.
TEST_P(qwen3_parity, kv_cache_decode_matches_full_forward) {
  const qwen3_model model = qwen3_model::load(fixture_dir(GetParam()));
  auto expected = load_expected(GetParam());
  for (const bool padded : {false, true}) {
    const torch::Tensor ids = expected[padded ? "padded_ids" : "ids"];
    const torch::Tensor mask = padded ? expected["padded_mask"] : torch::ones_like(ids);
    qwen3_forward_options full_opts;
    full_opts.attention_mask = mask;
    const torch::Tensor full = model.forward(ids, full_opts);
    qwen3_kv_cache cache;
    std::vector<torch::Tensor> parts;
    for (int64_t begin = 0, len = 4; begin < ids.size(1); begin += len, len = 1) {
      qwen3_forward_options opts;
      opts.cache = &cache;
      opts.attention_mask = mask.narrow(1, 0, begin + len);
      parts.push_back(model.forward(ids.narrow(1, begin, len), opts));
      EXPECT_EQ(cache.length(), begin + len);
    }
    const torch::Tensor incremental = torch::cat(parts, 1);
    EXPECT_LE(max_rel_error(real_rows(incremental, mask), real_rows(full, mask)), 1e-5)
        << (padded ? "padded" : "unpadded");
  }
}

INSTANTIATE_TEST_SUITE_P(fixtures, qwen3_parity, ::testing::Values("qwen3_gqa", "qwen3_tied"));

TEST(qwen3_model, prefix_embeddings_match_transformers_inputs_embeds) {
  const qwen3_model model = qwen3_model::load(fixture_dir("qwen3_gqa"));
  auto expected = load_expected("qwen3_gqa");
  qwen3_forward_options opts;
  opts.prefix_embeds = expected["prefix"];
  const torch::Tensor logits = model.forward(expected["ids"], opts);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{2, 10, 128}));
  EXPECT_LE(max_rel_error(logits, expected["prefix_logits"]), parity_tolerance);
  // A prefix alone (no tokens) gives the prefix rows.
  const torch::Tensor alone = model.forward(torch::zeros({2, 0}, torch::kInt64), opts);
  EXPECT_LE(max_rel_error(alone, expected["prefix_logits"].narrow(1, 0, 3)), parity_tolerance);
}

TEST(qwen3_model, tied_lm_head_shares_the_embedding) {
  const qwen3_model tied = qwen3_model::load(fixture_dir("qwen3_tied"));
  EXPECT_EQ(tied.weights().lm_head.data_ptr(), tied.weights().embed_tokens.data_ptr());
  const qwen3_model untied = qwen3_model::load(fixture_dir("qwen3_gqa"));
  EXPECT_NE(untied.weights().lm_head.data_ptr(), untied.weights().embed_tokens.data_ptr());
}

// The fixtures are BF16 / F16; the same values written as F32 load to the same logits.
TEST(qwen3_model, f32_checkpoint_gives_the_same_logits) {
  for (const char* name : {"qwen3_gqa", "qwen3_tied"}) {
    const qwen3_model half = qwen3_model::load(fixture_dir(name));
    const scratch_checkpoint f32(name, named_weights(half));
    const qwen3_model full = qwen3_model::load(f32.dir());
    const torch::Tensor ids = load_expected(name)["ids"];
    EXPECT_TRUE(torch::equal(full.forward(ids), half.forward(ids))) << name;
  }
}

TEST(qwen3_model, missing_tensor_is_named) {
  const qwen3_model model = qwen3_model::load(fixture_dir("qwen3_gqa"));
  for (const char* name : {"model.layers.1.self_attn.k_norm.weight", "lm_head.weight",
                           "model.embed_tokens.weight", "model.norm.weight"}) {
    auto weights = named_weights(model);
    weights.erase(name);
    const scratch_checkpoint ckpt("qwen3_gqa", weights);
    const std::string message = load_error(ckpt.dir());
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("missing"), std::string::npos) << message;
  }
}

TEST(qwen3_model, wrong_shape_is_named) {
  const qwen3_model model = qwen3_model::load(fixture_dir("qwen3_gqa"));
  auto weights = named_weights(model);
  const std::string name = "model.layers.0.self_attn.k_proj.weight";
  weights[name] = weights[name].t();  // [64, 32] instead of [32, 64]
  const scratch_checkpoint ckpt("qwen3_gqa", weights);
  const std::string message = load_error(ckpt.dir());
  EXPECT_NE(message.find(name), std::string::npos) << message;
  EXPECT_NE(message.find("[64, 32]"), std::string::npos) << message;
  EXPECT_NE(message.find("expected [32, 64]"), std::string::npos) << message;
}

TEST(qwen3_model, non_float_tensor_is_rejected) {
  const qwen3_model model = qwen3_model::load(fixture_dir("qwen3_gqa"));
  auto weights = named_weights(model);
  weights["model.norm.weight"] = torch::ones({64}, torch::kInt32);
  const scratch_checkpoint ckpt("qwen3_gqa", weights);
  const std::string message = load_error(ckpt.dir());
  EXPECT_NE(message.find("model.norm.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("I32"), std::string::npos) << message;
}

TEST(qwen3_model, constructor_checks_weights_against_config) {
  const qwen3_model model = qwen3_model::load(fixture_dir("qwen3_gqa"));
  qwen3_weights fewer = model.weights();
  fewer.layers.pop_back();
  EXPECT_THROW(qwen3_model(model.config(), fewer), error);
  qwen3_weights bad = model.weights();
  bad.layers[1].q_norm = torch::ones({8});
  EXPECT_THROW(qwen3_model(model.config(), bad), error);
}

TEST(qwen3_model, bad_inputs_throw) {
  const qwen3_model model = qwen3_model::load(fixture_dir("qwen3_gqa"));
  const torch::Tensor ids = torch::zeros({2, 5}, torch::kInt64);
  EXPECT_THROW(model.forward(torch::full({1, 3}, 128, torch::kInt64)), error);  // vocab is 128
  EXPECT_THROW(model.forward(torch::full({1, 3}, -1, torch::kInt64)), error);
  EXPECT_THROW(model.forward(torch::zeros({5}, torch::kInt64)), error);
  EXPECT_THROW(model.forward(torch::zeros({1, 3}, torch::kFloat32)), error);
  qwen3_forward_options opts;
  opts.attention_mask = torch::ones({2, 4}, torch::kInt64);
  EXPECT_THROW(model.forward(ids, opts), error);
  opts = {};
  opts.position_ids = torch::zeros({2, 6}, torch::kInt64);
  EXPECT_THROW(model.forward(ids, opts), error);
  opts = {};
  opts.prefix_embeds = torch::zeros({2, 3, 32});
  EXPECT_THROW(model.forward(ids, opts), error);
  qwen3_kv_cache cache;
  opts = {};
  opts.cache = &cache;
  model.forward(ids, opts);
  EXPECT_THROW(model.forward(torch::zeros({3, 1}, torch::kInt64), opts), error);  // cached batch 2
  EXPECT_THROW(model.forward(ids.narrow(0, 0, 1), opts), error);
  // The int32 form of the same ids is accepted.
  EXPECT_TRUE(torch::equal(model.forward(ids.to(torch::kInt32)), model.forward(ids)));
}

}  // namespace
}  // namespace sparserl
