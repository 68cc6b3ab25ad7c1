#pragma once
// LibTorch tensors to and from safetensors: float tensor views copied into owned tensors of a
// chosen dtype and device, and named tensors written (from any device) in their own dtype.
#include <torch/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/safetensors.h"

namespace sparserl {

// "[2, 3]": shapes in error messages.
std::string shape_text(c10::IntArrayRef shape);

// The torch dtype of an F32 / BF16 / F16 tensor; `where` names the tensor in the error otherwise.
torch::Dtype torch_float_dtype(st_dtype dtype, const std::string& where);

// The safetensors dtype of a torch dtype (float, integer or bool); throws for the others.
st_dtype st_dtype_of(torch::Dtype dtype, const std::string& where);

// A copy of `view` (F32, BF16 or F16) as an owned `dtype` tensor on `device`, so it outlives the
// mapping it came from.
torch::Tensor read_float_tensor(const tensor_view& view, const std::string& where,
                                torch::Dtype dtype, torch::Device device);

// Writes tensors by name, each in its own dtype, copied to contiguous host memory first;
// atomic like write_safetensors. The "format": "pt" metadata is what transformers and PEFT expect.
using named_tensors = std::vector<std::pair<std::string, torch::Tensor>>;
void write_torch_safetensors(const std::string& path, const named_tensors& tensors,
                             const std::map<std::string, std::string>& metadata = {
                                 {"format", "pt"}});

}  // namespace sparserl
