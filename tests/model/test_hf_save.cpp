// save_hf_model and the PEFT adapter layout: a merged save loads (with qwen3_model::load) to the
// adapted model, an unmerged one to the base; adapters round-trip exactly through
// save_peft_adapter / load_peft_adapter, and every kind of broken adapter directory is refused
// with the file and tensor (or key) named. With SPARSERL_HF_SAVE_DIR set, one test also leaves a
// saved model, adapter and reference logits there for tools/check_hf_save.py.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "model/hf_save.h"
#include "model/qwen3.h"
#include "model/safetensors.h"
#include "model/torch_safetensors.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string fixture_dir(const std::string& name) {
  return std::string(SPARSERL_SOURCE_DIR) + "/tests/model/fixtures/" + name;
}

torch::Tensor sample_ids(int64_t vocab) {
  return torch::remainder(torch::arange(14, torch::kInt64) * 37 + 5, vocab).view({2, 7});
}

double max_rel_error(const torch::Tensor& actual, const torch::Tensor& expected) {
  EXPECT_EQ(actual.sizes(), expected.sizes());
  return ((actual - expected).abs().max() / expected.abs().max()).item<double>();
}

void randomize_lora(const qwen3_model& model, uint64_t seed) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  for (torch::Tensor p : model.lora_parameters()) p.copy_(torch::randn(p.sizes()) * 0.1);
}

class scratch_dir {
 public:
  scratch_dir() {
    path_ = fs::temp_directory_path() /
            ("sparserl_hf_save_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(path_);
  }
  ~scratch_dir() { fs::remove_all(path_); }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.insert(entry.path().filename());
  return out;
}

qwen3_model lora_model(const char* name, uint64_t seed = 1, int rank = 8) {
  qwen3_model model = qwen3_model::load(fixture_dir(name));
  lora_config cfg;
  cfg.rank = rank;
  model.attach_lora(cfg, seed);
  randomize_lora(model, seed + 100);
  return model;
}

TEST(hf_save, merged_save_loads_to_the_adapted_model) {
  for (const char* name : {"qwen3_gqa", "qwen3_tied"}) {
    const qwen3_model model = lora_model(name);
    const torch::Tensor ids = sample_ids(model.config().vocab_size);
    const torch::Tensor adapted = model.forward(ids);
    scratch_dir dir;
    save_hf_model(model, dir.str());
    EXPECT_EQ(files_in(dir.str()), (std::set<std::string>{"config.json", "model.safetensors"}));
    const qwen3_model merged = qwen3_model::load(dir.str());
    EXPECT_FALSE(merged.has_lora());
    const double rel = max_rel_error(merged.forward(ids), adapted);
    std::printf("[ %s ] merged vs unmerged LoRA: max relative logit error %.3g\n", name, rel);
    EXPECT_LE(rel, 1e-5);
    qwen3_forward_options off;
    off.adapters_enabled = false;
    EXPECT_GT(max_rel_error(merged.forward(ids), model.forward(ids, off)), 1e-3);
  }
}

TEST(hf_save, unmerged_save_is_the_base_model) {
  const qwen3_model model = lora_model("qwen3_gqa");
  scratch_dir dir;
  save_hf_model(model, dir.str(), /*merge_lora=*/false);
  const torch::Tensor ids = sample_ids(128);
  qwen3_forward_options off;
  off.adapters_enabled = false;
  EXPECT_TRUE(torch::equal(qwen3_model::load(dir.str()).forward(ids), model.forward(ids, off)));
}

// Names, dtypes and config as transformers' save_pretrained writes them.
TEST(hf_save, layout_matches_the_hf_checkpoint) {
  for (const char* name : {"qwen3_gqa", "qwen3_tied"}) {
    for (const torch::Dtype dtype : {torch::kFloat32, torch::kBFloat16}) {
      const qwen3_model model = qwen3_model::load(fixture_dir(name), dtype);
      scratch_dir dir;
      save_hf_model(model, dir.str());
      const safetensors_file saved(dir / "model.safetensors");
      const safetensors_file original(fixture_dir(name) + "/model.safetensors");
      std::vector<std::string> want = original.names();
      if (model.config().tie_word_embeddings)
        want.erase(std::remove(want.begin(), want.end(), "lm_head.weight"), want.end());
      EXPECT_EQ(saved.names(), want) << name;
      for (const std::string& t : saved.names())
        EXPECT_EQ(saved.get(t).dtype, dtype == torch::kFloat32 ? st_dtype::f32 : st_dtype::bf16);
      EXPECT_EQ(saved.metadata().at("format"), "pt");
      const qwen3_config reread = load_qwen3_config(dir / "config.json");
      json a = to_json(reread), b = to_json(model.config());
      EXPECT_EQ(reread.torch_dtype, dtype == torch::kFloat32 ? "float32" : "bfloat16");
      a.erase("torch_dtype");
      b.erase("torch_dtype");
      EXPECT_EQ(a, b) << name;
      // The values survive exactly (bf16 -> bf16, f16 fixture -> f32 is exact too).
      const qwen3_model reloaded = qwen3_model::load(dir.str(), dtype);
      const torch::Tensor ids = sample_ids(model.config().vocab_size);
      EXPECT_TRUE(torch::equal(reloaded.forward(ids), model.forward(ids))) << name;
    }
  }
}

TEST(hf_save, save_replaces_files_and_leaves_no_temporaries) {
  scratch_dir dir;
  save_hf_model(qwen3_model::load(fixture_dir("qwen3_tied")), dir.str());
  const qwen3_model gqa = lora_model("qwen3_gqa");
  save_hf_model(gqa, dir.str());
  save_peft_adapter(gqa, dir.str());
  EXPECT_EQ(files_in(dir.str()),
            (std::set<std::string>{"config.json", "model.safetensors", "adapter_config.json",
                                   "adapter_model.safetensors"}));
  EXPECT_EQ(qwen3_model::load(dir.str()).config().num_hidden_layers, 2);
}

TEST(peft, adapter_files_have_peft_names_and_config) {
  const qwen3_model model = lora_model("qwen3_gqa", 1, 4);
  scratch_dir dir;
  save_peft_adapter(model, dir.str());
  std::ifstream in(dir / "adapter_config.json");
  const json cfg = json::parse(in);
  EXPECT_EQ(cfg["peft_type"], "LORA");
  EXPECT_EQ(cfg["task_type"], "CAUSAL_LM");
  EXPECT_EQ(cfg["r"], 4);
  EXPECT_EQ(cfg["lora_alpha"], 16);
  EXPECT_DOUBLE_EQ(cfg["lora_dropout"].get<double>(), 0.05);
  EXPECT_EQ(cfg["bias"], "none");
  EXPECT_EQ(cfg["fan_in_fan_out"], false);
  EXPECT_EQ(cfg["base_model_name_or_path"], fixture_dir("qwen3_gqa"));
  EXPECT_EQ(cfg["target_modules"],
            (json{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}));
  const safetensors_file file(dir / "adapter_model.safetensors");
  EXPECT_EQ(file.names().size(), 2u * 7 * 2);
  const tensor_view& a = file.get("base_model.model.model.layers.1.self_attn.k_proj.lora_A.weight");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{4, 64}));
  EXPECT_EQ(a.dtype, st_dtype::f32);
  EXPECT_EQ(file.get("base_model.model.model.layers.0.mlp.down_proj.lora_B.weight").shape,
            (std::vector<int64_t>{64, 4}));
  EXPECT_EQ(file.get("base_model.model.model.layers.0.self_attn.k_proj.lora_B.weight").shape,
            (std::vector<int64_t>{32, 4}));
}

TEST(peft, round_trip_gives_identical_outputs) {
  const qwen3_model model = lora_model("qwen3_gqa");
  const torch::Tensor ids = sample_ids(128);
  const torch::Tensor want = model.forward(ids);
  scratch_dir dir;
  save_peft_adapter(model, dir.str());
  // Into a model without LoRA: the file's config is attached.
  qwen3_model fresh = qwen3_model::load(fixture_dir("qwen3_gqa"));
  load_peft_adapter(fresh, dir.str());
  ASSERT_TRUE(fresh.has_lora());
  EXPECT_TRUE(same_lora_config(*fresh.lora(), *model.lora()));
  EXPECT_TRUE(torch::equal(fresh.forward(ids), want));
  // Into the same tensors of a model with the same config already attached (an optimizer's
  // references stay valid).
  qwen3_model attached = qwen3_model::load(fixture_dir("qwen3_gqa"));
  attached.attach_lora({}, 99);
  const void* before = attached.lora_parameters()[0].data_ptr();
  load_peft_adapter(attached, dir.str());
  EXPECT_EQ(attached.lora_parameters()[0].data_ptr(), before);
  EXPECT_TRUE(torch::equal(attached.forward(ids), want));
  EXPECT_TRUE(attached.lora_parameters()[0].requires_grad());
}

TEST(peft, saving_without_adapters_throws) {
  scratch_dir dir;
  EXPECT_THROW(save_peft_adapter(qwen3_model::load(fixture_dir("qwen3_gqa")), dir.str()), error);
}

// The error of loading `dir` into a fresh model (which must be left without LoRA), or "".
std::string load_error(const std::string& dir) {
  qwen3_model model = qwen3_model::load(fixture_dir("qwen3_gqa"));
  try {
    load_peft_adapter(model, dir);
  } catch (const error& e) {
    EXPECT_FALSE(model.has_lora()) << "a failed load changed the model";
    return e.what();
  }
  return "";
}

void expect_mentions(const std::string& message, const std::vector<std::string>& parts) {
  ASSERT_FALSE(message.empty()) << "no error";
  for (const std::string& p : parts) EXPECT_NE(message.find(p), std::string::npos) << message;
}

// A saved adapter whose tensors `edit` changes before they are written back.
class broken_adapter {
 public:
  explicit broken_adapter(const std::function<void(std::map<std::string, torch::Tensor>&)>& edit) {
    save_peft_adapter(lora_model("qwen3_gqa"), dir_.str());
    std::map<std::string, torch::Tensor> tensors;
    {
      const safetensors_file file(path());
      for (const std::string& name : file.names())
        tensors[name] = read_float_tensor(file.get(name), name, torch::kFloat32, torch::kCPU);
    }
    edit(tensors);
    write_torch_safetensors(path(), named_tensors(tensors.begin(), tensors.end()));
  }
  std::string dir() const { return dir_.str(); }
  std::string path() const { return dir_ / "adapter_model.safetensors"; }

 private:
  scratch_dir dir_;
};

const std::string some_a = "base_model.model.model.layers.1.mlp.up_proj.lora_A.weight";

TEST(peft, missing_tensor_is_named) {
  const broken_adapter adapter([](auto& t) { t.erase(some_a); });
  expect_mentions(load_error(adapter.dir()), {adapter.path(), some_a, "missing"});
}

TEST(peft, wrong_shape_is_named) {
  const broken_adapter adapter([](auto& t) { t[some_a] = t[some_a].t().contiguous(); });
  expect_mentions(load_error(adapter.dir()), {adapter.path(), some_a, "[64, 8]", "[8, 64]"});
}

TEST(peft, unknown_tensor_is_named) {
  const std::string extra = "base_model.model.lm_head.lora_A.weight";
  const broken_adapter adapter([&](auto& t) { t[extra] = torch::zeros({8, 64}); });
  expect_mentions(load_error(adapter.dir()), {adapter.path(), extra});
  const std::string layer9 = "base_model.model.model.layers.9.mlp.up_proj.lora_A.weight";
  const broken_adapter deeper([&](auto& t) { t[layer9] = torch::zeros({8, 64}); });
  expect_mentions(load_error(deeper.dir()), {layer9});
}

TEST(peft, missing_or_corrupt_files_are_named) {
  scratch_dir dir;
  save_peft_adapter(lora_model("qwen3_gqa"), dir.str());
  const std::string weights = dir / "adapter_model.safetensors";
  const auto size = fs::file_size(weights);
  fs::resize_file(weights, size / 2);
  expect_mentions(load_error(dir.str()), {weights});
  fs::remove(weights);
  expect_mentions(load_error(dir.str()), {weights, "missing"});
  fs::remove(dir / "adapter_config.json");
  expect_mentions(load_error(dir.str()), {dir / "adapter_config.json"});
  std::ofstream(dir / "adapter_config.json") << "{ not json";
  expect_mentions(load_error(dir.str()), {"invalid JSON", dir / "adapter_config.json"});
}

TEST(peft, unsupported_config_is_refused_by_key) {
  scratch_dir dir;
  save_peft_adapter(lora_model("qwen3_gqa"), dir.str());
  const std::string path = dir / "adapter_config.json";
  std::ifstream in(path);
  const json good = json::parse(in);
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& j) { j["peft_type"] = "PREFIX_TUNING"; }, "peft_type"},
      {[](json& j) { j["task_type"] = "SEQ_CLS"; }, "task_type"},
      {[](json& j) { j["r"] = 0; }, "\"r\""},
      {[](json& j) { j.erase("r"); }, "\"r\""},
      {[](json& j) { j["bias"] = "all"; }, "bias"},
      {[](json& j) { j["use_dora"] = true; }, "use_dora"},
      {[](json& j) { j["fan_in_fan_out"] = true; }, "fan_in_fan_out"},
      {[](json& j) {
         j["rank_pattern"] = {{"q_proj", 4}};
       },
       "rank_pattern"},
      {[](json& j) { j["modules_to_save"] = {"lm_head"}; }, "modules_to_save"},
      {[](json& j) { j["target_modules"] = "q_proj|v_proj"; }, "target_modules"},
      {[](json& j) {
         j["target_modules"] = {"q_proj", "embed_tokens"};
       },
       "'embed_tokens'"},
      {[](json& j) { j["lora_dropout"] = "high"; }, "lora_dropout"},
  };
  for (const auto& [edit, key] : cases) {
    json bad = good;
    edit(bad);
    std::ofstream(path) << bad.dump();
    expect_mentions(load_error(dir.str()), {path, key});
  }
}

TEST(peft, config_must_match_the_attached_adapters) {
  scratch_dir dir;
  save_peft_adapter(lora_model("qwen3_gqa", 1, 8), dir.str());
  qwen3_model model = qwen3_model::load(fixture_dir("qwen3_gqa"));
  lora_config other;
  other.rank = 4;
  model.attach_lora(other, 0);
  const std::vector<torch::Tensor> before = model.lora_parameters();
  std::vector<torch::Tensor> copies;
  for (const torch::Tensor& t : before) copies.push_back(t.clone());
  try {
    load_peft_adapter(model, dir.str());
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    expect_mentions(e.what(), {"adapter_config.json", "r=8", "r=4", "differs"});
  }
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], copies[i]));
}

// Leaves files for tools/check_hf_save.py, per fixture F: DIR/F/merged (save_hf_model, LoRA
// merged), DIR/F/base (the base), DIR/F/adapter (PEFT), DIR/F/reference.safetensors (ids and our
// LoRA logits) and DIR/F/plain (the fixture loaded and saved in its own dtype, no LoRA; its
// reference is the fixture's expected.safetensors).
TEST(hf_save, export_for_transformers_check) {
  const char* out = std::getenv("SPARSERL_HF_SAVE_DIR");
  if (out == nullptr) GTEST_SKIP() << "set SPARSERL_HF_SAVE_DIR to write the check files";
  for (const char* name : {"qwen3_gqa", "qwen3_tied"}) {
    const qwen3_model model = lora_model(name);
    const std::string dir = std::string(out) + "/" + name;
    save_hf_model(model, dir + "/merged");
    save_hf_model(model, dir + "/base", /*merge_lora=*/false);
    save_peft_adapter(model, dir + "/adapter");
    const torch::Tensor ids = sample_ids(model.config().vocab_size);
    write_torch_safetensors(dir + "/reference.safetensors",
                            {{"ids", ids}, {"logits", model.forward(ids)}});
    const torch::Dtype own = std::string(name) == "qwen3_gqa" ? torch::kBFloat16 : torch::kFloat16;
    save_hf_model(qwen3_model::load(fixture_dir(name), own), dir + "/plain");
  }
}

}  // namespace
}  // namespace sparserl
