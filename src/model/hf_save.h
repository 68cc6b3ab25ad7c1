#pragma once
// Saving qwen3_model in the layouts the HF tools read: a transformers model directory
// (config.json + model.safetensors, LoRA merged in) and a PEFT LoRA adapter directory
// (adapter_config.json + adapter_model.safetensors), which load_peft_adapter reads back. Each
// file goes to a temporary name first (itself written atomically) and is renamed into place only
// once all are written, so a crash never leaves a half-written file.
#include <string>

#include "model/qwen3.h"

namespace sparserl {

// config.json (the model's config re-serialised, dtype = the weights' dtype) and one
// model.safetensors under the HF names, in the weights' dtype; lm_head.weight is left out when
// tied, as transformers does. With merge_lora, each adapted weight is W + (alpha / r) B A, so
// qwen3_model::load and transformers' from_pretrained give the adapted model; without it, the
// base weights are saved. Creates `dir` if needed; files of the same names are replaced.
void save_hf_model(const qwen3_model& model, const std::string& dir, bool merge_lora = true);

// PEFT's LoRA layout: adapter_config.json (peft_type LORA, task_type CAUSAL_LM, r, lora_alpha,
// lora_dropout, target_modules, bias "none", base_model_name_or_path = model.name_or_path())
// and adapter_model.safetensors (fp32) holding
// base_model.model.model.layers.{i}.{self_attn|mlp}.{module}.lora_{A|B}.weight.
// Throws when the model has no LoRA attached.
void save_peft_adapter(const qwen3_model& model, const std::string& dir);

// Reads a PEFT LoRA adapter directory into `model`: attaches adapters of the file's config when
// the model has none, else requires the attached config to be the same; then copies every
// tensor in (into the existing tensors, so optimizer references stay valid). Strict: a missing
// file or tensor, an extra or unknown tensor, a wrong shape or dtype, and config features the
// decoder does not implement (bias, DoRA, rsLoRA, rank/alpha patterns, modules_to_save, regex
// targets) each throw sparserl::error naming the file and the tensor or key.
void load_peft_adapter(qwen3_model& model, const std::string& dir);

}  // namespace sparserl
