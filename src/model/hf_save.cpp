#include "model/hf_save.h"

#include <fcntl.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "model/safetensors.h"
#include "model/torch_safetensors.h"
#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "sparse/quote_text.h"

namespace sparserl {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* peft_config_file = "adapter_config.json";
constexpr const char* peft_weights_file = "adapter_model.safetensors";

// The files of one directory, each written under a temporary name and renamed into place only
// when all of them are written; whatever is left uncommitted is removed.
class staged_dir {
 public:
  explicit staged_dir(std::string dir) : dir_(std::move(dir)) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) throw error("cannot create directory " + dir_ + ": " + ec.message());
  }
  ~staged_dir() {
    std::error_code ec;
    for (const auto& [temp, final_path] : files_) fs::remove(temp, ec);
  }
  staged_dir(const staged_dir&) = delete;
  staged_dir& operator=(const staged_dir&) = delete;

  // The path to write `name` to now.
  std::string stage(const std::string& name) {
    const std::string temp = dir_ + "/." + name + ".staged." + std::to_string(::getpid());
    files_.emplace_back(temp, dir_ + "/" + name);
    return temp;
  }

  void commit() {
    for (const auto& [temp, final_path] : files_)
      if (std::rename(temp.c_str(), final_path.c_str()) != 0)
        throw error("cannot rename " + temp + " to " + final_path + ": " + std::strerror(errno));
    files_.clear();
    // The renames themselves survive a crash only once the directory is synced.
    const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
  }

 private:
  std::string dir_;
  std::vector<std::pair<std::string, std::string>> files_;  // temp, final
};

const char* config_dtype_name(torch::Dtype dtype) {
  switch (dtype) {
    case torch::kFloat32:
      return "float32";
    case torch::kBFloat16:
      return "bfloat16";
    case torch::kFloat16:
      return "float16";
    default:
      throw error(std::string("save_hf_model: weights of dtype ") + c10::toString(dtype) +
                  " cannot be saved (float32, bfloat16 or float16)");
  }
}

std::string layer_prefix(size_t layer) { return "model.layers." + std::to_string(layer) + "."; }

// The LoRA-targetable linear stored at `member`, or nullptr for a norm.
const qwen3_linear* linear_at(torch::Tensor qwen3_layer_weights::*member) {
  for (const qwen3_linear& m : qwen3_linears())
    if (m.weight == member) return &m;
  return nullptr;
}

// The HF names and (merged) host copies of every weight, one device tensor merged at a time.
named_tensors hf_weights(const qwen3_model& model, bool merge_lora) {
  const qwen3_weights& w = model.weights();
  const bool merge = merge_lora && model.has_lora();
  torch::NoGradGuard no_grad;
  const auto host = [](const torch::Tensor& t) { return t.detach().to(torch::kCPU); };
  named_tensors out{{"model.embed_tokens.weight", host(w.embed_tokens)}};
  const std::vector<qwen3_layer_tensor> table = qwen3_layer_tensors(model.config());
  for (size_t l = 0; l < w.layers.size(); ++l)
    for (const qwen3_layer_tensor& t : table) {
      torch::Tensor weight = w.layers[l].*t.member;
      const qwen3_linear* m = merge ? linear_at(t.member) : nullptr;
      if (m != nullptr)
        weight =
            lora_merged_weight(weight, model.lora_layers()[l].*m->adapter, model.lora()->scale());
      out.emplace_back(layer_prefix(l) + t.suffix, host(weight));
    }
  out.emplace_back("model.norm.weight", host(w.norm));
  if (!model.config().tie_word_embeddings) out.emplace_back("lm_head.weight", host(w.lm_head));
  return out;
}

std::string peft_tensor_name(size_t layer, const qwen3_linear& m, bool is_a) {
  return "base_model.model." + layer_prefix(layer) + m.parent + "." + m.name +
         (is_a ? ".lora_A.weight" : ".lora_B.weight");
}

// The targeted linears in table order (the order adapters are drawn and listed in).
std::vector<const qwen3_linear*> targeted(const lora_config& config) {
  std::vector<const qwen3_linear*> out;
  for (const qwen3_linear& m : qwen3_linears())
    if (std::find(config.target_modules.begin(), config.target_modules.end(), m.name) !=
        config.target_modules.end())
      out.push_back(&m);
  return out;
}

// One adapter tensor of the PEFT file: its name and the shape `config` gives it on `model`.
struct peft_tensor {
  std::string name;
  std::vector<int64_t> shape;
  size_t layer;
  const qwen3_linear* module;
  bool is_a;
};

std::vector<peft_tensor> peft_layout(const qwen3_model& model, const lora_config& config) {
  std::vector<peft_tensor> out;
  const int64_t r = config.rank;
  for (size_t l = 0; l < model.weights().layers.size(); ++l)
    for (const qwen3_linear* m : targeted(config)) {
      const torch::Tensor& w = model.weights().layers[l].*m->weight;
      out.push_back({peft_tensor_name(l, *m, true), {r, w.size(1)}, l, m, true});
      out.push_back({peft_tensor_name(l, *m, false), {w.size(0), r}, l, m, false});
    }
  return out;
}

// 16 rather than 16.0 when alpha is whole, as PEFT's own configs have it.
json number_json(double value) {
  if (std::floor(value) == value && std::abs(value) < 1e15) return static_cast<int64_t>(value);
  return value;
}

json peft_config_json(const qwen3_model& model) {
  const lora_config& c = *model.lora();
  std::vector<std::string> targets;
  for (const qwen3_linear* m : targeted(c)) targets.emplace_back(m->name);
  const json base = model.name_or_path().empty() ? json(nullptr) : json(model.name_or_path());
  // Every key is a field of PEFT's LoraConfig; the features we do not implement are written
  // in their off state so PEFT builds exactly the adapter we computed with.
  return json{{"peft_type", "LORA"},
              {"task_type", "CAUSAL_LM"},
              {"base_model_name_or_path", base},
              {"revision", nullptr},
              {"inference_mode", true},
              {"r", c.rank},
              {"lora_alpha", number_json(c.alpha)},
              {"lora_dropout", c.dropout},
              {"target_modules", targets},
              {"bias", "none"},
              {"fan_in_fan_out", false},
              {"init_lora_weights", true},
              {"use_rslora", false},
              {"use_dora", false},
              {"modules_to_save", nullptr},
              {"layers_to_transform", nullptr},
              {"layers_pattern", nullptr},
              {"rank_pattern", json::object()},
              {"alpha_pattern", json::object()}};
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error("cannot read " + path);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw error("invalid JSON in " + path + ": " + e.what());
  }
}

// Reads PEFT's LoRA keys, with PEFT's defaults for the optional ones, and refuses every
// setting that would make PEFT compute something this decoder does not.
class peft_config_reader {
 public:
  peft_config_reader(const json& doc, std::string path) : doc_(doc), path_(std::move(path)) {
    if (!doc_.is_object()) fail("the adapter config is not a JSON object");
  }

  [[noreturn]] void fail(const std::string& why) const { throw error(path_ + ": " + why); }

  const json* find(const char* key) const {
    const auto it = doc_.find(key);
    return it == doc_.end() || it->is_null() ? nullptr : &*it;
  }

  // `key` may be absent or null, or must equal `off` (or be an empty object / list).
  void require_off(const char* key, const json& off) const {
    const json* v = find(key);
    if (v == nullptr || *v == off || ((v->is_object() || v->is_array()) && v->empty())) return;
    fail("\"" + std::string(key) + "\" is " + v->dump() + ", which is not supported (only " +
         (off.is_object() ? std::string("null or empty") : off.dump()) + ")");
  }

  double number(const char* key, double fallback) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_number()) fail("\"" + std::string(key) + "\" must be a number, got " + v->dump());
    return v->get<double>();
  }

  lora_config parse() const {
    const json* type = find("peft_type");
    if (type == nullptr || *type != "LORA")
      fail("peft_type is " + (type ? type->dump() : std::string("missing")) +
           ", expected \"LORA\"");
    if (const json* task = find("task_type"); task != nullptr && *task != "CAUSAL_LM")
      fail("task_type " + task->dump() + " is not \"CAUSAL_LM\"");
    lora_config c;
    const json* r = find("r");
    if (r == nullptr || !r->is_number_integer() || r->get<int64_t>() <= 0 ||
        r->get<int64_t>() > (int64_t{1} << 20))
      fail("\"r\" must be a positive integer, got " + (r ? r->dump() : std::string("nothing")));
    c.rank = static_cast<int>(r->get<int64_t>());
    c.alpha = number("lora_alpha", 8);
    c.dropout = number("lora_dropout", 0);
    c.target_modules = targets();
    if (const json* bias = find("bias"); bias != nullptr && *bias != "none")
      fail("bias " + bias->dump() + " is not supported (only \"none\")");
    for (const char* key : {"fan_in_fan_out", "use_rslora", "use_dora", "lora_bias"})
      require_off(key, false);
    for (const char* key : {"rank_pattern", "alpha_pattern", "modules_to_save",
                            "layers_to_transform", "layer_replication"})
      require_off(key, json::object());
    validate(c, path_);
    return c;
  }

 private:
  std::vector<std::string> targets() const {
    const json* t = find("target_modules");
    if (t == nullptr) fail("\"target_modules\" is missing");
    if (t->is_string())
      fail("target_modules is the pattern " + t->dump() + "; only a list of module names is read");
    if (!t->is_array()) fail("\"target_modules\" must be a list, got " + t->dump());
    std::vector<std::string> out;
    for (const json& name : *t) {
      if (!name.is_string()) fail("target_modules has a non-string entry " + name.dump());
      const std::string s = name.get<std::string>();
      const auto& all = qwen3_linears();
      if (std::none_of(all.begin(), all.end(), [&](const qwen3_linear& m) { return s == m.name; }))
        fail("target module " + quote_text(s, name_quote_bytes) +
             " is not a Qwen3 linear (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, "
             "down_proj)");
      out.push_back(s);
    }
    return out;
  }

  const json& doc_;
  std::string path_;
};

std::string config_text(const lora_config& c) {
  std::string targets;
  for (const qwen3_linear* m : targeted(c))
    targets += (targets.empty() ? "" : ",") + std::string(m->name);
  return "r=" + std::to_string(c.rank) + " alpha=" + std::to_string(c.alpha) +
         " dropout=" + std::to_string(c.dropout) + " targets=" + targets;
}

// Every tensor of the file, checked against the layout and read to fp32 on `device`, before
// anything in the model changes.
std::vector<torch::Tensor> read_adapter_tensors(const std::string& path,
                                                const std::vector<peft_tensor>& layout,
                                                torch::Device device) {
  if (!fs::exists(path))
    throw error(path + " is missing" +
                (fs::exists(fs::path(path).parent_path() / "adapter_model.bin")
                     ? " (adapter_model.bin, PyTorch's pickle format, is not read)"
                     : ""));
  const safetensors_file file(path);
  std::set<std::string> expected;
  for (const peft_tensor& t : layout) expected.insert(t.name);
  for (const std::string& name : file.names())
    if (expected.count(name) == 0)
      throw error(path + ": tensor " + name +
                  " is not a LoRA weight of the configured layers and target modules");
  std::vector<torch::Tensor> out;
  for (const peft_tensor& t : layout) {
    const std::string where = path + ": tensor " + t.name;
    if (!file.contains(t.name)) throw error(where + " is missing");
    const tensor_view& view = file.get(t.name);
    if (view.shape != t.shape)
      throw error(where + " has shape " + shape_text(view.shape) + ", expected " +
                  shape_text(t.shape));
    out.push_back(read_float_tensor(view, where, torch::kFloat32, device));
  }
  return out;
}

}  // namespace

void save_hf_model(const qwen3_model& model, const std::string& dir, bool merge_lora) {
  const torch::Dtype dtype = model.weights().embed_tokens.scalar_type();
  json config = to_json(model.config());
  config["torch_dtype"] = config["dtype"] = config_dtype_name(dtype);  // 4.x and 5.x spellings
  const std::string config_json = config.dump(2) + "\n";
  const named_tensors weights = hf_weights(model, merge_lora);
  staged_dir out(dir);
  write_torch_safetensors(out.stage("model.safetensors"), weights);
  write_file_atomic(out.stage("config.json"), {config_json});
  out.commit();
}

void save_peft_adapter(const qwen3_model& model, const std::string& dir) {
  if (!model.has_lora()) throw error("save_peft_adapter: the model has no LoRA adapters");
  named_tensors tensors;
  for (const peft_tensor& t : peft_layout(model, *model.lora())) {
    const lora_linear& a = model.lora_layers()[t.layer].*t.module->adapter;
    tensors.emplace_back(t.name, (t.is_a ? a.a : a.b).to(torch::kFloat32));
  }
  const std::string config_json = peft_config_json(model).dump(2) + "\n";
  staged_dir out(dir);
  write_torch_safetensors(out.stage(peft_weights_file), tensors);
  write_file_atomic(out.stage(peft_config_file), {config_json});
  out.commit();
}

void load_peft_adapter(qwen3_model& model, const std::string& dir) {
  const std::string config_path = dir + "/" + peft_config_file;
  const lora_config config = peft_config_reader(read_json(config_path), config_path).parse();
  if (model.has_lora() && !same_lora_config(config, *model.lora()))
    throw error(config_path + ": adapter (" + config_text(config) +
                ") differs from the LoRA attached to the model (" + config_text(*model.lora()) +
                ")");
  const std::vector<peft_tensor> layout = peft_layout(model, config);
  const torch::Device device = model.weights().embed_tokens.device();
  const std::vector<torch::Tensor> values =
      read_adapter_tensors(dir + "/" + peft_weights_file, layout, device);
  if (!model.has_lora()) model.attach_lora(config, /*seed=*/0);  // values are overwritten below
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < layout.size(); ++i) {
    const lora_linear& a = model.lora_layers()[layout[i].layer].*layout[i].module->adapter;
    torch::Tensor target = layout[i].is_a ? a.a : a.b;
    target.copy_(values[i]);
  }
}

}  // namespace sparserl
