#pragma once
// Named torch tensors to and from one safetensors file: the way trainer state, projectors, value
// heads and adapters are stored (one format, readable by the Python safetensors package).
#include <torch/types.h>

#include <map>
#include <string>

namespace sparserl {

// Writes atomically (write_torch_safetensors); tensors are copied to the CPU. Dtypes: float32/64,
// bfloat16, float16, int64/32/16/8, uint8, bool.
void save_tensor_file(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

struct loaded_tensors {
  std::map<std::string, torch::Tensor> tensors;  // owned CPU copies in the file's dtype
  std::map<std::string, std::string> metadata;
};

// Throws sparserl::error naming the file on a missing, truncated or malformed file.
loaded_tensors load_tensor_file(const std::string& path);

// The tensor `name` of `file` (loaded from `path`), checked against `shape`; throws naming both.
torch::Tensor take_tensor(const loaded_tensors& file, const std::string& path,
                          const std::string& name, c10::IntArrayRef shape);

}  // namespace sparserl
