#include "train/policy.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <filesystem>

#include "model/hf_save.h"
#include "model/qwen3_init.h"
#include "sparse/error.h"
#include "sparse/gzip_file.h"

namespace fs = std::filesystem;

namespace sparserl::train {
namespace {

constexpr const char* projector_file = "projector.safetensors";
constexpr const char* value_file = "value_head.safetensors";
constexpr const char* adapter_dir = "adapter";

void add_numbered(std::map<std::string, torch::Tensor>& out, const std::string& group,
                  const std::vector<torch::Tensor>& tensors) {
  char buf[32];
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s.%04zu", group.c_str(), i);  // sorts in order
    out[buf] = tensors[i];
  }
}

// A new critic starts at exactly 0 everywhere: a randomly initialised head would add value
// differences of its own to every token's advantage (noise that swamps the one reward at the end of
// a program and wrecks a small policy within a few steps); at 0 the first advantages are the
// discounted scores, and the head learns from the returns.
std::shared_ptr<value_head> new_value_head(int64_t hidden, uint64_t seed, torch::Device device) {
  auto head = std::make_shared<value_head>(hidden, seed, device);
  torch::NoGradGuard no_grad;
  for (const torch::Tensor& t : head->parameters()) const_cast<torch::Tensor&>(t).zero_();
  return head;
}

void copy_tokenizer(const std::string& from_dir, const std::string& to_dir) {
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
    const fs::path src = fs::path(from_dir) / name;
    if (!fs::exists(src) || fs::equivalent(fs::path(from_dir), fs::path(to_dir))) continue;
    write_file_atomic((fs::path(to_dir) / name).string(),
                      {read_file_decompressed(src.string(), size_t{1} << 30)});
  }
}

}  // namespace

policy policy::load(const std::string& model_dir, const std::string& tokenizer_dir,
                    const policy_load_options& o) {
  policy p;
  p.device_ = o.device;
  p.model_ = std::make_shared<qwen3_model>(qwen3_model::load(model_dir, o.dtype, o.device));
  p.tokenizer_ = std::make_shared<text::bpe_tokenizer>(text::bpe_tokenizer::load(tokenizer_dir));
  p.tokenizer_dir_ = tokenizer_dir;
  const fs::path dir(model_dir);
  if (fs::exists(dir / projector_file)) {
    p.projector_ = std::make_shared<matrix_projector>(
        matrix_projector::from_file((dir / projector_file).string(), o.dtype, o.device));
  } else {
    p.projector_ = std::make_shared<matrix_projector>(
        matrix_projector_options{o.encoding, p.model_->config().hidden_size, o.seed});
    p.projector_->to(o.dtype, o.device);
  }
  if (fs::exists(dir / adapter_dir / "adapter_config.json")) {
    load_peft_adapter(*p.model_, (dir / adapter_dir).string());
  } else if (o.lora) {
    p.model_->attach_lora(*o.lora, o.seed);
  }
  if (o.with_value_head || fs::exists(dir / value_file)) {
    p.value_ = new_value_head(p.model_->config().hidden_size, o.seed + 1, o.device);
    if (fs::exists(dir / value_file)) p.value_->load((dir / value_file).string());
  }
  if (!p.model_->has_lora()) p.model_->set_base_trainable(true);
  return p;
}

policy policy::create(const qwen3_config& config, const std::string& tokenizer_dir,
                      const policy_load_options& o) {
  policy p;
  p.device_ = o.device;
  p.model_ = std::make_shared<qwen3_model>(config,
                                           random_qwen3_weights(config, o.seed, o.dtype, o.device));
  p.model_->set_base_trainable(true);
  p.tokenizer_ = std::make_shared<text::bpe_tokenizer>(text::bpe_tokenizer::load(tokenizer_dir));
  p.tokenizer_dir_ = tokenizer_dir;
  p.projector_ = std::make_shared<matrix_projector>(
      matrix_projector_options{o.encoding, config.hidden_size, o.seed});
  p.projector_->to(o.dtype, o.device);
  if (o.lora) p.model_->attach_lora(*o.lora, o.seed);
  if (o.with_value_head)
    p.value_ = std::make_shared<value_head>(config.hidden_size, o.seed + 1, o.device);
  return p;
}

std::map<std::string, torch::Tensor> policy::trainable(bool include_value,
                                                       bool include_projector) const {
  std::map<std::string, torch::Tensor> out;
  if (model_->has_lora())
    add_numbered(out, "lora", model_->lora_parameters());
  else
    add_numbered(out, "base", model_->parameters());
  if (include_projector) add_numbered(out, "projector", projector_->parameters());
  if (include_value && value_) add_numbered(out, "value", value_->parameters());
  return out;
}

torch::Tensor policy::prefix(const std::vector<const matrix_encoding*>& encodings) const {
  return projector_->forward(encodings);
}

matrix_encoding policy::encode(const csr_matrix& matrix) const {
  return encode_matrix(matrix, projector_->encoding_options());
}

matrix_encoding policy::encode(const csr_matrix& matrix, const matrix_features& features) const {
  return encode_matrix(matrix, features, projector_->encoding_options());
}

int64_t policy::prefix_tokens() const { return projector_->tokens(); }

std::vector<int32_t> policy::encode_text(const std::string& text) const {
  return tokenizer_->encode(text, false);
}

int32_t policy::eos_id() const {
  if (auto id = tokenizer_->eos_id()) return *id;
  throw error("policy: the tokenizer in " + tokenizer_dir_ + " names no EOS token");
}

int32_t policy::pad_id() const {
  if (auto id = tokenizer_->pad_id()) return *id;
  return eos_id();
}

void policy::set_training(bool on) { model_->set_training(on); }

void policy::save(const std::string& dir, bool merge_lora) const {
  fs::create_directories(dir);
  save_hf_model(*model_, dir, merge_lora);
  if (model_->has_lora() && !merge_lora)
    save_peft_adapter(*model_, (fs::path(dir) / adapter_dir).string());
  projector_->save((fs::path(dir) / projector_file).string());
  if (value_) value_->save((fs::path(dir) / value_file).string());
  copy_tokenizer(tokenizer_dir_, dir);
}

}  // namespace sparserl::train
