#pragma once
// safetensors checkpoints (https://huggingface.co/docs/safetensors): reading through a read-only
// memory map (tensors are views into it, valid while the file object lives), atomic writing, and
// sharded directories described by model.safetensors.index.json. Reading validates everything the
// format promises (sizes, bounds, full non-overlapping coverage of the buffer), so a truncated or
// hostile file yields sparserl::error instead of an out-of-bounds view.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sparserl {

enum class st_dtype { f64, f32, f16, bf16, i64, i32, i16, i8, u8, boolean };

size_t dtype_size(st_dtype dtype);
const char* dtype_name(st_dtype dtype);         // the header spelling: "F32", "BOOL", ...
st_dtype parse_dtype(const std::string& name);  // throws on an unknown spelling

// Elements of a shape (1 for a scalar, shape []); throws on a negative dim or overflow.
int64_t shape_numel(const std::vector<int64_t>& shape);

struct tensor_view {
  st_dtype dtype = st_dtype::f32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t bytes = 0;

  int64_t numel() const { return shape_numel(shape); }
};

class safetensors_file {
 public:
  safetensors_file() = default;
  explicit safetensors_file(const std::string& path) { open(path); }
  ~safetensors_file();
  safetensors_file(safetensors_file&& other) noexcept;
  safetensors_file& operator=(safetensors_file&& other) noexcept;
  safetensors_file(const safetensors_file&) = delete;
  safetensors_file& operator=(const safetensors_file&) = delete;

  // Maps and validates `path`, replacing whatever was open before.
  void open(const std::string& path);
  void close();

  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  const tensor_view& get(const std::string& name) const;  // throws if absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::string& path() const { return path_; }

 private:
  void parse_header(const char* header, size_t header_bytes, size_t buffer_bytes);

  std::string path_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  std::map<std::string, tensor_view> tensors_;
  std::map<std::string, std::string> metadata_;
};

// One tensor to write: `data` must hold exactly shape_numel(shape) * dtype_size(dtype) bytes.
struct tensor_data {
  std::string name;
  st_dtype dtype = st_dtype::f32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t bytes = 0;
};

// Writes a safetensors file atomically (temp file, fsync, rename). Tensors are laid out in name
// order and the header is space-padded to a multiple of 8 bytes, as the Python package does, so
// every tensor's data is 8-byte aligned in a mapping.
void write_safetensors(const std::string& path, const std::vector<tensor_data>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// A checkpoint directory: either shards listed by model.safetensors.index.json or a single
// model.safetensors. Views stay valid while this object lives.
class sharded_checkpoint {
 public:
  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  const tensor_view& get(const std::string& name) const;
  const std::map<std::string, const tensor_view*>& tensors() const { return tensors_; }
  // The index's "metadata" object (e.g. total_size); empty for a single-file checkpoint.
  const nlohmann::json& index_metadata() const { return index_metadata_; }
  const std::string& dir() const { return dir_; }

 private:
  friend sharded_checkpoint load_sharded(const std::string& dir);

  std::string dir_;
  std::vector<std::unique_ptr<safetensors_file>> shards_;
  std::map<std::string, const tensor_view*> tensors_;
  nlohmann::json index_metadata_ = nlohmann::json::object();
};

sharded_checkpoint load_sharded(const std::string& dir);

}  // namespace sparserl
