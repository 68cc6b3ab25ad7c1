#include "model/matrix_projector.h"

#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <utility>

#include "model/safetensors.h"
#include "sparse/error.h"

namespace sparserl {

namespace {

using json = nlohmann::json;

constexpr const char* metadata_key = "sparserl.matrix_projector";
constexpr int format_version = 1;
constexpr int64_t max_hidden = int64_t{1} << 20;
const char* const weight_names[] = {"projector.fc1.weight", "projector.fc1.bias",
                                    "projector.fc2.weight", "projector.fc2.bias"};

std::vector<std::vector<int64_t>> weight_shapes(int64_t feature_dim, int64_t hidden) {
  return {{hidden, feature_dim}, {hidden}, {hidden, hidden}, {hidden}};
}

std::string shape_text(c10::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void check_options(const matrix_projector_options& o) {
  validate_encoding_options(o.encoding);
  if (o.hidden < 1 || o.hidden > max_hidden)
    throw error("matrix_projector: hidden must be in [1, " + std::to_string(max_hidden) +
                "], got " + std::to_string(o.hidden));
}

// Uniform in [-bound, bound) from mt19937_64, whose sequence the standard fixes (the standard
// distributions are implementation-defined, torch's generators differ across versions).
torch::Tensor uniform_tensor(std::vector<int64_t> shape, double bound, std::mt19937_64& rng) {
  torch::Tensor t = torch::empty(shape, torch::kFloat32);
  float* data = t.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    data[i] = static_cast<float>((2 * unit - 1) * bound);
  }
  return t;
}

json options_to_json(const matrix_projector_options& o) {
  return {{"format_version", format_version},
          {"max_nnz", o.encoding.max_nnz},
          {"dim", o.encoding.dim},
          {"base", o.encoding.base},
          {"feature_dim", 3 * o.encoding.dim},
          {"hidden", o.hidden},
          {"seed", o.seed}};
}

template <typename T>
T json_field(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number())
    throw error(where + ": metadata has no number \"" + key + "\"");
  if (std::is_integral<T>::value && !it->is_number_integer())
    throw error(where + ": metadata \"" + key + "\" must be an integer, got " + it->dump());
  return it->get<T>();
}

// An int field, refusing values that would wrap when narrowed.
int int_field(const json& j, const char* key, const std::string& where) {
  const int64_t value = json_field<int64_t>(j, key, where);
  if (value < INT32_MIN || value > INT32_MAX)
    throw error(where + ": metadata \"" + key + "\" = " + std::to_string(value) +
                " is out of range");
  return static_cast<int>(value);
}

matrix_projector_options options_from_file(const safetensors_file& file) {
  const std::string where = "matrix projector file " + file.path();
  const auto it = file.metadata().find(metadata_key);
  if (it == file.metadata().end())
    throw error(where + ": no \"" + metadata_key +
                "\" metadata entry (not written by matrix_projector::save)");
  json j;
  try {
    j = json::parse(it->second);
  } catch (const json::exception& e) {
    throw error(where + ": metadata \"" + metadata_key + "\" is not JSON: " + e.what());
  }
  if (!j.is_object()) throw error(where + ": metadata \"" + metadata_key + "\" is not an object");
  const int version = int_field(j, "format_version", where);
  if (version != format_version)
    throw error(where + ": format_version " + std::to_string(version) + ", this build reads " +
                std::to_string(format_version));
  matrix_projector_options o;
  o.encoding.max_nnz = int_field(j, "max_nnz", where);
  o.encoding.dim = int_field(j, "dim", where);
  o.encoding.base = json_field<double>(j, "base", where);
  o.hidden = json_field<int64_t>(j, "hidden", where);
  o.seed = json_field<uint64_t>(j, "seed", where);
  try {
    check_options(o);
  } catch (const error& e) {
    throw error(where + ": " + e.what());
  }
  const int64_t feature_dim = json_field<int64_t>(j, "feature_dim", where);
  if (feature_dim != 3 * int64_t{o.encoding.dim})
    throw error(where + ": feature_dim " + std::to_string(feature_dim) + " is not 3 * dim (" +
                std::to_string(3 * int64_t{o.encoding.dim}) + ")");
  return o;
}

torch::Tensor read_weight(const safetensors_file& file, const char* name,
                          const std::vector<int64_t>& shape, torch::Dtype dtype,
                          torch::Device device) {
  const std::string where = "matrix projector file " + file.path() + ": tensor " + name;
  if (!file.contains(name)) throw error(where + " is missing");
  const tensor_view& view = file.get(name);
  if (view.shape != shape)
    throw error(where + " has shape " + shape_text(view.shape) + ", expected " + shape_text(shape));
  torch::Dtype file_dtype;
  switch (view.dtype) {
    case st_dtype::f32:
      file_dtype = torch::kFloat32;
      break;
    case st_dtype::bf16:
      file_dtype = torch::kBFloat16;
      break;
    case st_dtype::f16:
      file_dtype = torch::kFloat16;
      break;
    default:
      throw error(where + " has dtype " + dtype_name(view.dtype) + "; expected F32, BF16 or F16");
  }
  // from_blob wants a mutable pointer; the mapping is only read and copied out.
  const torch::Tensor mapped = torch::from_blob(const_cast<void*>(view.data), view.shape,
                                                torch::TensorOptions().dtype(file_dtype));
  return mapped.to(device, dtype, /*non_blocking=*/false, /*copy=*/true);
}

std::vector<torch::Tensor> read_weights(const safetensors_file& file,
                                        const matrix_projector_options& o, torch::Dtype dtype,
                                        torch::Device device) {
  const auto shapes = weight_shapes(3 * int64_t{o.encoding.dim}, o.hidden);
  std::vector<torch::Tensor> weights;
  for (size_t i = 0; i < shapes.size(); ++i)
    weights.push_back(read_weight(file, weight_names[i], shapes[i], dtype, device));
  return weights;
}

// The first option that differs, as "dim 16 in the file, 32 here"; empty when they agree.
std::string options_difference(const matrix_projector_options& file,
                               const matrix_projector_options& here) {
  auto differ = [](const char* what, const std::string& a, const std::string& b) {
    return std::string(what) + " " + a + " in the file, " + b + " here";
  };
  if (file.encoding.max_nnz != here.encoding.max_nnz)
    return differ("max_nnz", std::to_string(file.encoding.max_nnz),
                  std::to_string(here.encoding.max_nnz));
  if (file.encoding.dim != here.encoding.dim)
    return differ("dim", std::to_string(file.encoding.dim), std::to_string(here.encoding.dim));
  if (file.encoding.base != here.encoding.base)
    return differ("base", json(file.encoding.base).dump(), json(here.encoding.base).dump());
  if (file.hidden != here.hidden)
    return differ("hidden", std::to_string(file.hidden), std::to_string(here.hidden));
  return "";
}

}  // namespace

matrix_projector::matrix_projector(const matrix_projector_options& options) : options_(options) {
  check_options(options_);
  std::mt19937_64 rng(options_.seed);
  const auto shapes = weight_shapes(feature_dim(), hidden());
  const double fc1_bound = 1 / std::sqrt(static_cast<double>(feature_dim()));
  const double fc2_bound = 1 / std::sqrt(static_cast<double>(hidden()));
  std::vector<torch::Tensor> weights;
  for (size_t i = 0; i < shapes.size(); ++i)
    weights.push_back(uniform_tensor(shapes[i], i < 2 ? fc1_bound : fc2_bound, rng));
  set_weights(std::move(weights));
}

matrix_projector matrix_projector::from_file(const std::string& path, torch::Dtype dtype,
                                             torch::Device device) {
  const safetensors_file file(path);
  matrix_projector_options options = options_from_file(file);
  // Built with a 1-wide hidden layer first so the seeded initialisation of a large projector is
  // not computed only to be overwritten.
  matrix_projector_options small = options;
  small.hidden = 1;
  matrix_projector projector(small);
  projector.options_ = options;
  projector.set_weights(read_weights(file, options, dtype, device));
  return projector;
}

void matrix_projector::load(const std::string& path) {
  const safetensors_file file(path);
  const matrix_projector_options in_file = options_from_file(file);
  const std::string difference = options_difference(in_file, options_);
  if (!difference.empty())
    throw error("matrix projector file " + path + " does not fit this projector: " + difference);
  set_weights(read_weights(file, options_, fc1_weight_.scalar_type(), fc1_weight_.device()));
}

void matrix_projector::save(const std::string& path) const {
  std::vector<torch::Tensor> host;  // keeps the F32 copies alive while writing
  std::vector<tensor_data> tensors;
  const std::vector<torch::Tensor> weights = parameters();
  for (size_t i = 0; i < weights.size(); ++i) {
    host.push_back(weights[i].detach().to(torch::kCPU, torch::kFloat32).contiguous());
    const torch::Tensor& t = host.back();
    tensors.push_back({weight_names[i], st_dtype::f32, t.sizes().vec(), t.data_ptr(),
                       static_cast<size_t>(t.numel()) * sizeof(float)});
  }
  write_safetensors(path, tensors,
                    {{"format", "pt"}, {metadata_key, options_to_json(options_).dump()}});
}

void matrix_projector::to(torch::Dtype dtype, torch::Device device) {
  std::vector<torch::Tensor> moved;
  for (const torch::Tensor& t : parameters())
    moved.push_back(t.detach().to(device, dtype, /*non_blocking=*/false, /*copy=*/true));
  set_weights(std::move(moved));
}

torch::Tensor matrix_projector::stack(const std::vector<const matrix_encoding*>& batch) const {
  if (batch.empty()) throw error("matrix_projector: empty batch");
  const int64_t per_matrix = tokens() * feature_dim();
  torch::Tensor out =
      torch::empty({static_cast<int64_t>(batch.size()), tokens(), feature_dim()}, torch::kFloat32);
  for (size_t i = 0; i < batch.size(); ++i) {
    const matrix_encoding* e = batch[i];
    const std::string where = "matrix_projector: batch item " + std::to_string(i);
    if (e == nullptr) throw error(where + " is null");
    if (e->tokens != tokens() || e->feature_dim != feature_dim())
      throw error(where + " has " + std::to_string(e->tokens) + " tokens of " +
                  std::to_string(e->feature_dim) + " features; this projector takes " +
                  std::to_string(tokens()) + " of " + std::to_string(feature_dim()) +
                  " (encode with its encoding_options())");
    if (static_cast<int64_t>(e->features.size()) != per_matrix)
      throw error(where + " holds " + std::to_string(e->features.size()) + " values, not tokens *" +
                  " feature_dim = " + std::to_string(per_matrix));
    std::memcpy(out[static_cast<int64_t>(i)].data_ptr<float>(), e->features.data(),
                static_cast<size_t>(per_matrix) * sizeof(float));
  }
  return out;
}

torch::Tensor matrix_projector::forward(const std::vector<const matrix_encoding*>& batch) const {
  return forward(stack(batch));
}

torch::Tensor matrix_projector::forward(const torch::Tensor& features) const {
  if (!features.defined() || features.dim() != 3 || features.size(1) != tokens() ||
      features.size(2) != feature_dim())
    throw error("matrix_projector::forward: features must be [batch, " + std::to_string(tokens()) +
                ", " + std::to_string(feature_dim()) + "], got " +
                (features.defined() ? shape_text(features.sizes()) : std::string("undefined")));
  const torch::Tensor x = features.to(fc1_weight_.device(), fc1_weight_.scalar_type());
  const torch::Tensor h = torch::gelu(torch::linear(x, fc1_weight_, fc1_bias_));
  return torch::linear(h, fc2_weight_, fc2_bias_);
}

std::vector<torch::Tensor> matrix_projector::parameters() const {
  return {fc1_weight_, fc1_bias_, fc2_weight_, fc2_bias_};
}

void matrix_projector::set_weights(std::vector<torch::Tensor> weights) {
  for (torch::Tensor& w : weights) w.set_requires_grad(true);
  fc1_weight_ = std::move(weights[0]);
  fc1_bias_ = std::move(weights[1]);
  fc2_weight_ = std::move(weights[2]);
  fc2_bias_ = std::move(weights[3]);
}

}  // namespace sparserl
