#include "model/tensor_file.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <vector>

#include "model/safetensors.h"
#include "model/torch_safetensors.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

torch::Dtype torch_dtype_of(st_dtype dtype) {
  switch (dtype) {
    case st_dtype::f64:
      return torch::kFloat64;
    case st_dtype::f32:
      return torch::kFloat32;
    case st_dtype::bf16:
      return torch::kBFloat16;
    case st_dtype::f16:
      return torch::kFloat16;
    case st_dtype::i64:
      return torch::kInt64;
    case st_dtype::i32:
      return torch::kInt32;
    case st_dtype::i16:
      return torch::kInt16;
    case st_dtype::i8:
      return torch::kInt8;
    case st_dtype::u8:
      return torch::kUInt8;
    case st_dtype::boolean:
      return torch::kBool;
  }
  return torch::kFloat32;
}

}  // namespace

void save_tensor_file(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  write_torch_safetensors(path, named_tensors(tensors.begin(), tensors.end()), metadata);
}

loaded_tensors load_tensor_file(const std::string& path) {
  safetensors_file file(path);
  loaded_tensors out;
  out.metadata = file.metadata();
  for (const std::string& name : file.names()) {
    const tensor_view& v = file.get(name);
    const torch::Tensor mapped = torch::from_blob(
        const_cast<void*>(v.data), v.shape, torch::TensorOptions().dtype(torch_dtype_of(v.dtype)));
    out.tensors[name] = mapped.clone();  // the mapping closes with `file`
  }
  return out;
}

torch::Tensor take_tensor(const loaded_tensors& file, const std::string& path,
                          const std::string& name, c10::IntArrayRef shape) {
  auto it = file.tensors.find(name);
  if (it == file.tensors.end()) throw error(path + ": tensor " + name + " is missing");
  if (it->second.sizes() != shape)
    throw error(path + ": tensor " + name + " has shape " + shape_text(it->second.sizes()) +
                ", expected " + shape_text(shape));
  return it->second;
}

}  // namespace sparserl
