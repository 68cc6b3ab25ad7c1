#include "model/torch_safetensors.h"

#include <torch/types.h>
#include <torch/utils.h>

#include "sparse/error.h"

namespace sparserl {

std::string shape_text(c10::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

torch::Dtype torch_float_dtype(st_dtype dtype, const std::string& where) {
  switch (dtype) {
    case st_dtype::f32:
      return torch::kFloat32;
    case st_dtype::bf16:
      return torch::kBFloat16;
    case st_dtype::f16:
      return torch::kFloat16;
    default:
      throw error(where + " has dtype " + dtype_name(dtype) + "; expected F32, BF16 or F16");
  }
}

st_dtype st_dtype_of(torch::Dtype dtype, const std::string& where) {
  switch (dtype) {
    case torch::kFloat64:
      return st_dtype::f64;
    case torch::kFloat32:
      return st_dtype::f32;
    case torch::kBFloat16:
      return st_dtype::bf16;
    case torch::kFloat16:
      return st_dtype::f16;
    case torch::kInt64:
      return st_dtype::i64;
    case torch::kInt32:
      return st_dtype::i32;
    case torch::kInt16:
      return st_dtype::i16;
    case torch::kInt8:
      return st_dtype::i8;
    case torch::kUInt8:
      return st_dtype::u8;
    case torch::kBool:
      return st_dtype::boolean;
    default:
      throw error(where + " has torch dtype " + std::string(c10::toString(dtype)) +
                  ", which safetensors cannot hold");
  }
}

torch::Tensor read_float_tensor(const tensor_view& view, const std::string& where,
                                torch::Dtype dtype, torch::Device device) {
  const torch::Dtype file_dtype = torch_float_dtype(view.dtype, where);
  // from_blob wants a mutable pointer; the mapping is only read, and the copy below takes the
  // values out of it.
  const torch::Tensor mapped = torch::from_blob(const_cast<void*>(view.data), view.shape,
                                                torch::TensorOptions().dtype(file_dtype));
  return mapped.to(device, dtype, /*non_blocking=*/false, /*copy=*/true);
}

void write_torch_safetensors(const std::string& path, const named_tensors& tensors,
                             const std::map<std::string, std::string>& metadata) {
  std::vector<torch::Tensor> host;  // keeps the bytes alive until the write is done
  std::vector<tensor_data> data;
  host.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    const std::string where = "writing " + path + ": tensor " + name;
    if (!tensor.defined()) throw error(where + " is not set");
    const st_dtype dtype = st_dtype_of(tensor.scalar_type(), where);
    host.push_back(tensor.detach().to(torch::kCPU).contiguous());
    const torch::Tensor& h = host.back();
    data.push_back({name, dtype, h.sizes().vec(), h.data_ptr(), h.nbytes()});
  }
  write_safetensors(path, data, metadata);
}

}  // namespace sparserl
