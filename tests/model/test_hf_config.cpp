#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/hf_config.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using json = nlohmann::json;

// The shape of Qwen3-0.6B's config.json as transformers 4.5x writes it.
json qwen3_small() {
  return json::parse(R"({
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 3072,
    "max_position_embeddings": 40960, "max_window_layers": 28, "model_type": "qwen3",
    "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000,
    "sliding_window": null, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
    "transformers_version": "4.51.0", "use_cache": true, "use_sliding_window": false,
    "vocab_size": 151936})");
}

void expect_parse_error(const json& doc, const std::string& phrase, bool allow_other = false) {
  try {
    parse_qwen3_config(doc, "cfg.json", allow_other);
    ADD_FAILURE() << "parsed though expecting \"" << phrase << "\": " << doc.dump();
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cfg.json"));
    EXPECT_THAT(e.what(), HasSubstr(phrase));
  }
}

TEST(HfConfig, ParsesAQwen3ConfigWithExplicitHeadDimAndGqa) {
  const qwen3_config c = parse_qwen3_config(qwen3_small(), "cfg.json");
  EXPECT_EQ(c.vocab_size, 151936);
  EXPECT_EQ(c.hidden_size, 1024);
  EXPECT_EQ(c.intermediate_size, 3072);
  EXPECT_EQ(c.num_hidden_layers, 28);
  EXPECT_EQ(c.num_attention_heads, 16);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.head_dim, 128);  // explicit, not hidden / heads = 64
  EXPECT_EQ(c.max_position_embeddings, 40960);
  EXPECT_DOUBLE_EQ(c.rms_norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(c.rope_theta, 1e6);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_EQ(c.bos_token_ids, std::vector<int64_t>{151643});
  EXPECT_EQ(c.eos_token_ids, std::vector<int64_t>{151645});
}

TEST(HfConfig, ReadsRopeParametersAndDtypeAsTransformers5WritesThem) {
  json doc = qwen3_small();
  doc.erase("rope_theta");
  doc.erase("rope_scaling");
  doc.erase("torch_dtype");
  doc["rope_parameters"] = {{"rope_theta", 5e5}, {"rope_type", "default"}};
  doc["dtype"] = "float32";
  doc["eos_token_id"] = {151645, 151643};
  const qwen3_config c = parse_qwen3_config(doc, "cfg.json");
  EXPECT_DOUBLE_EQ(c.rope_theta, 5e5);
  EXPECT_EQ(c.torch_dtype, "float32");
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{151645, 151643}));
}

TEST(HfConfig, DerivesHeadDimAndDefaultsKvHeadsAndUntiedEmbeddings) {
  json doc = qwen3_small();
  for (const char* key : {"head_dim", "num_key_value_heads", "tie_word_embeddings", "bos_token_id",
                          "eos_token_id", "rope_theta"})
    doc.erase(key);
  const qwen3_config c = parse_qwen3_config(doc, "cfg.json");
  EXPECT_EQ(c.head_dim,
            doc["hidden_size"].get<int64_t>() / doc["num_attention_heads"].get<int64_t>());
  EXPECT_EQ(c.num_key_value_heads, c.num_attention_heads);  // plain multi-head attention
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_TRUE(c.bos_token_ids.empty());
  EXPECT_DOUBLE_EQ(c.rope_theta, 10000.0);
}

TEST(HfConfig, RejectsNonDefaultRope) {
  json doc = qwen3_small();
  doc["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
  expect_parse_error(doc, "only \"default\"");
  doc = qwen3_small();
  doc.erase("rope_theta");
  doc["rope_parameters"] = {{"rope_theta", 1e6}, {"rope_type", "llama3"}};
  expect_parse_error(doc, "\"llama3\"");
  doc["rope_parameters"] = {{"rope_theta", "big"}, {"rope_type", "default"}};
  expect_parse_error(doc, "rope_theta");
}

TEST(HfConfig, RejectsInconsistentHeads) {
  json doc = qwen3_small();
  doc.erase("head_dim");
  doc["num_attention_heads"] = 24;  // 1024 / 24 is not whole
  doc["num_key_value_heads"] = 8;
  expect_parse_error(doc, "does not divide hidden_size");
  doc = qwen3_small();
  doc["num_key_value_heads"] = 6;  // 16 query heads cannot be grouped by 6
  expect_parse_error(doc, "does not divide num_attention_heads");
  doc = qwen3_small();
  doc["head_dim"] = 127;
  expect_parse_error(doc, "must be even");
  doc = qwen3_small();
  doc["num_attention_heads"] = 0;
  expect_parse_error(doc, "must be positive");
}

TEST(HfConfig, EveryRequiredKeyIsRequired) {
  for (const char* key : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                          "num_attention_heads"}) {
    json doc = qwen3_small();
    doc.erase(key);
    expect_parse_error(doc, std::string("missing required key \"") + key + "\"");
    doc[key] = nullptr;  // a null is as good as absent
    expect_parse_error(doc, std::string("missing required key \"") + key + "\"");
  }
}

TEST(HfConfig, RejectsWrongTypes) {
  const std::vector<std::pair<std::string, json>> bad = {
      {"hidden_size", "1024"},        {"num_hidden_layers", 28.5}, {"rms_norm_eps", "1e-6"},
      {"tie_word_embeddings", "yes"}, {"torch_dtype", 16},         {"eos_token_id", "</s>"},
      {"bos_token_id", {1, "x"}},     {"attention_bias", 0},       {"head_dim", true}};
  for (const auto& [key, value] : bad) {
    json doc = qwen3_small();
    doc[key] = value;
    expect_parse_error(doc, "\"" + key + "\"");
  }
  expect_parse_error(json::array(), "not a JSON object");
  json doc = qwen3_small();
  doc["eos_token_id"] = 200000;
  expect_parse_error(doc, "outside the vocabulary");
  doc = qwen3_small();
  doc["hidden_act"] = "gelu";
  expect_parse_error(doc, "hidden_act");
}

TEST(HfConfig, ModelTypeMustBeQwen3UnlessAllowed) {
  json doc = qwen3_small();
  doc["model_type"] = "llama";
  expect_parse_error(doc, "model_type is 'llama'");
  EXPECT_EQ(parse_qwen3_config(doc, "cfg.json", true).hidden_size, 1024);
  doc.erase("model_type");
  expect_parse_error(doc, "model_type is missing");
  EXPECT_NO_THROW(parse_qwen3_config(doc, "cfg.json", true));
}

class HfConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sparserl_cfg_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(HfConfigFileTest, WriteThenLoadRoundTripsAndLooksLikeTransformers) {
  qwen3_config c = parse_qwen3_config(qwen3_small(), "cfg.json");
  c.tie_word_embeddings = false;
  c.attention_bias = true;
  c.eos_token_ids = {151645, 151643};
  c.bos_token_ids.clear();
  const std::string path = dir_ + "/config.json";
  write_config(path, c);
  const qwen3_config back = load_qwen3_config(path);
  EXPECT_EQ(to_json(back), to_json(c));
  EXPECT_FALSE(back.tie_word_embeddings);
  EXPECT_TRUE(back.attention_bias);
  EXPECT_EQ(back.eos_token_ids, c.eos_token_ids);
  EXPECT_TRUE(back.bos_token_ids.empty());

  std::ifstream in(path);
  const json doc = json::parse(in);
  EXPECT_EQ(doc["model_type"], "qwen3");
  EXPECT_EQ(doc["architectures"], json({"Qwen3ForCausalLM"}));
  EXPECT_EQ(doc["head_dim"], 128);
  EXPECT_TRUE(doc["bos_token_id"].is_null());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(HfConfigFileTest, WriteRefusesAnInvalidConfig) {
  qwen3_config c = parse_qwen3_config(qwen3_small(), "cfg.json");
  c.num_key_value_heads = 3;
  EXPECT_THROW(write_config(dir_ + "/config.json", c), error);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(HfConfigFileTest, LoadErrorsNameTheFile) {
  const std::string path = dir_ + "/config.json";
  EXPECT_THROW(load_qwen3_config(path), error);
  std::ofstream(path) << "{\"model_type\": ";
  try {
    load_qwen3_config(path);
    ADD_FAILURE();
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("invalid JSON"));
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
}

}  // namespace
}  // namespace sparserl
