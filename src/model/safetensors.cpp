#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <utility>

#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "sparse/json_depth.h"
#include "sparse/quote_text.h"

namespace sparserl {

namespace {

using json = nlohmann::json;

// The Python package refuses headers above 100 MB; so do we, before allocating anything.
constexpr uint64_t max_header_bytes = 100'000'000;

struct dtype_info {
  st_dtype dtype;
  const char* name;
  size_t size;
};

constexpr dtype_info dtype_table[] = {
    {st_dtype::f64, "F64", 8},      {st_dtype::f32, "F32", 4}, {st_dtype::f16, "F16", 2},
    {st_dtype::bf16, "BF16", 2},    {st_dtype::i64, "I64", 8}, {st_dtype::i32, "I32", 4},
    {st_dtype::i16, "I16", 2},      {st_dtype::i8, "I8", 1},   {st_dtype::u8, "U8", 1},
    {st_dtype::boolean, "BOOL", 1},
};

const dtype_info& info(st_dtype dtype) {
  for (const dtype_info& d : dtype_table)
    if (d.dtype == dtype) return d;
  throw error("invalid st_dtype value " + std::to_string(static_cast<int>(dtype)));
}

uint64_t read_le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// Bytes of a tensor, checking the multiplication cannot wrap.
uint64_t tensor_bytes(const std::vector<int64_t>& shape, st_dtype dtype) {
  const uint64_t numel = static_cast<uint64_t>(shape_numel(shape));
  const uint64_t size = dtype_size(dtype);
  if (numel > std::numeric_limits<uint64_t>::max() / size) throw error("tensor size overflows");
  return numel * size;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// nlohmann keeps only the last of repeated keys, so duplicates are caught while parsing.
json parse_header_json(const char* text, size_t bytes, std::string& duplicate) {
  std::set<std::string> seen;
  json::parser_callback_t note_keys = [&](int depth, json::parse_event_t event, json& parsed) {
    within_json_depth(depth);
    if (event == json::parse_event_t::key && depth == 1 && parsed.is_string()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!seen.insert(key).second && duplicate.empty()) duplicate = key;
    }
    return true;
  };
  return json::parse(text, text + bytes, note_keys);
}

struct entry_span {
  std::string name;
  uint64_t begin, end;
};

tensor_view parse_entry(const json& entry, uint64_t buffer_bytes, uint64_t& begin, uint64_t& end) {
  if (!entry.is_object()) throw error("entry is not an object");
  const auto dtype_it = entry.find("dtype");
  const auto shape_it = entry.find("shape");
  const auto offsets_it = entry.find("data_offsets");
  if (dtype_it == entry.end() || !dtype_it->is_string()) throw error("missing string \"dtype\"");
  if (shape_it == entry.end() || !shape_it->is_array()) throw error("missing array \"shape\"");
  if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2 ||
      !(*offsets_it)[0].is_number_unsigned() || !(*offsets_it)[1].is_number_unsigned())
    throw error("\"data_offsets\" must be two non-negative integers");
  tensor_view view;
  view.dtype = parse_dtype(dtype_it->get<std::string>());
  for (const json& dim : *shape_it) {
    if (!dim.is_number_integer()) throw error("shape has a non-integer dim");
    if (dim.get<int64_t>() < 0) throw error("negative dim in shape " + shape_it->dump());
    view.shape.push_back(dim.get<int64_t>());
  }
  begin = (*offsets_it)[0].get<uint64_t>();
  end = (*offsets_it)[1].get<uint64_t>();
  if (begin > end || end > buffer_bytes)
    throw error("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                "] out of the " + std::to_string(buffer_bytes) + "-byte buffer");
  const uint64_t want = tensor_bytes(view.shape, view.dtype);
  if (want != end - begin)
    throw error("shape " + shape_text(view.shape) + " of " + dtype_name(view.dtype) + " needs " +
                std::to_string(want) + " bytes but data_offsets span " +
                std::to_string(end - begin));
  view.bytes = static_cast<size_t>(want);
  return view;
}

// The spec requires tensors to tile the buffer exactly: no overlap, no hole, no trailing bytes.
void check_coverage(std::vector<entry_span> spans, uint64_t buffer_bytes) {
  std::sort(spans.begin(), spans.end(), [](const entry_span& a, const entry_span& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t covered = 0;
  const entry_span* last = nullptr;
  for (const entry_span& s : spans) {
    if (s.begin < covered)
      throw error("tensors " + quote_text(last->name, name_quote_bytes) + " and " +
                  quote_text(s.name, name_quote_bytes) + " overlap at byte " +
                  std::to_string(s.begin));
    if (s.begin > covered)
      throw error("gap in the data buffer: bytes [" + std::to_string(covered) + ", " +
                  std::to_string(s.begin) + ") belong to no tensor (before " +
                  quote_text(s.name, name_quote_bytes) + ")");
    covered = s.end;
    last = &s;
  }
  if (covered != buffer_bytes)
    throw error("gap in the data buffer: bytes [" + std::to_string(covered) + ", " +
                std::to_string(buffer_bytes) + ") at the end belong to no tensor");
}

std::map<std::string, std::string> parse_metadata(const json& meta) {
  if (!meta.is_object()) throw error("\"__metadata__\" is not an object");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : meta.items()) {
    if (!value.is_string())
      throw error("\"__metadata__\" value for " + quote_text(key, name_quote_bytes) +
                  " is not a string");
    out[key] = value.get<std::string>();
  }
  return out;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

size_t dtype_size(st_dtype dtype) { return info(dtype).size; }

const char* dtype_name(st_dtype dtype) { return info(dtype).name; }

st_dtype parse_dtype(const std::string& name) {
  for (const dtype_info& d : dtype_table)
    if (name == d.name) return d.dtype;
  throw error("unknown dtype " + quote_text(name, name_quote_bytes));
}

int64_t shape_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t dim : shape) {
    if (dim < 0) throw error("negative dim in shape " + shape_text(shape));
    if (dim != 0 && n > std::numeric_limits<int64_t>::max() / dim)
      throw error("shape " + shape_text(shape) + " has too many elements");
    n *= dim;
  }
  return n;
}

safetensors_file::~safetensors_file() { close(); }

safetensors_file::safetensors_file(safetensors_file&& other) noexcept { *this = std::move(other); }

safetensors_file& safetensors_file::operator=(safetensors_file&& other) noexcept {
  if (this == &other) return *this;
  close();
  path_ = std::move(other.path_);
  map_ = std::exchange(other.map_, nullptr);
  map_bytes_ = std::exchange(other.map_bytes_, 0);
  tensors_ = std::move(other.tensors_);  // views point into the mapping, which does not move
  metadata_ = std::move(other.metadata_);
  other.tensors_.clear();
  other.metadata_.clear();
  return *this;
}

void safetensors_file::close() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
  tensors_.clear();
  metadata_.clear();
}

void safetensors_file::open(const std::string& path) {
  close();
  path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw error("cannot open safetensors file " + path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw error("safetensors file " + path + " is not a regular file");
  }
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  if (file_bytes < 8) {
    ::close(fd);
    throw error("safetensors file " + path + " is " + std::to_string(file_bytes) +
                " bytes, too short for the 8-byte header length");
  }
  void* map = ::mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (map == MAP_FAILED)
    throw error("cannot mmap safetensors file " + path + ": " + std::strerror(map_errno));
  map_ = map;
  map_bytes_ = file_bytes;
  const auto* bytes = static_cast<const unsigned char*>(map_);
  const uint64_t header_bytes = read_le64(bytes);
  try {
    if (header_bytes > max_header_bytes || header_bytes > file_bytes - 8)
      throw error("oversized header: length " + std::to_string(header_bytes) +
                  " but the file has " + std::to_string(file_bytes - 8) + " bytes after it (cap " +
                  std::to_string(max_header_bytes) + ")");
    parse_header(reinterpret_cast<const char*>(bytes + 8), header_bytes,
                 file_bytes - 8 - header_bytes);
  } catch (const std::exception& e) {
    close();
    throw error("safetensors file " + path + ": " + e.what());
  }
}

void safetensors_file::parse_header(const char* header, size_t header_bytes, size_t buffer_bytes) {
  std::string duplicate;
  json doc;
  try {
    doc = parse_header_json(header, header_bytes, duplicate);
  } catch (const json::exception& e) {
    throw error(std::string("invalid JSON header: ") + e.what());
  }
  if (!doc.is_object()) throw error("header is not a JSON object");
  if (!duplicate.empty())
    throw error("duplicate tensor name " + quote_text(duplicate, name_quote_bytes) + " in header");
  const char* buffer = header + header_bytes;
  std::vector<entry_span> spans;
  for (const auto& [name, entry] : doc.items()) {
    if (name == "__metadata__") {
      metadata_ = parse_metadata(entry);
      continue;
    }
    uint64_t begin = 0, end = 0;
    try {
      tensor_view view = parse_entry(entry, buffer_bytes, begin, end);
      view.data = buffer + begin;
      tensors_.emplace(name, std::move(view));
    } catch (const error& e) {
      throw error("tensor " + quote_text(name, name_quote_bytes) + ": " + e.what());
    }
    spans.push_back({name, begin, end});
  }
  check_coverage(std::move(spans), buffer_bytes);
}

std::vector<std::string> safetensors_file::names() const {
  std::vector<std::string> out;
  for (const auto& [name, view] : tensors_) out.push_back(name);
  return out;
}

const tensor_view& safetensors_file::get(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw error("no tensor " + quote_text(name, name_quote_bytes) + " in " + path_);
  return it->second;
}

namespace {

// Validates one tensor to write and returns its byte count.
uint64_t checked_bytes(const tensor_data& t, const std::string& path) {
  const std::string where = "writing " + path + ": tensor " + quote_text(t.name, name_quote_bytes);
  if (t.name == "__metadata__") throw error(where + " uses the reserved name");
  uint64_t want = 0;
  try {
    want = tensor_bytes(t.shape, t.dtype);
  } catch (const error& e) {
    throw error(where + ": " + e.what());
  }
  if (want != t.bytes || (t.data == nullptr && t.bytes != 0))
    throw error(where + " has " + std::to_string(t.bytes) + " bytes of data but shape " +
                shape_text(t.shape) + " of " + dtype_name(t.dtype) + " needs " +
                std::to_string(want));
  return want;
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<tensor_data>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  // Data goes widest dtype first (then by name), as the Python package does: with the 8-byte
  // padded header every tensor is then aligned to its element size in a mapping.
  std::vector<const tensor_data*> layout;
  for (const tensor_data& t : tensors) layout.push_back(&t);
  std::sort(layout.begin(), layout.end(), [](const tensor_data* a, const tensor_data* b) {
    const size_t sa = dtype_size(a->dtype), sb = dtype_size(b->dtype);
    return sa != sb ? sa > sb : a->name < b->name;
  });
  std::map<std::string, std::pair<const tensor_data*, uint64_t>> by_name;  // header: name order
  uint64_t offset = 0;
  for (const tensor_data* t : layout) {
    const uint64_t bytes = checked_bytes(*t, path);
    if (!by_name.emplace(t->name, std::make_pair(t, offset)).second)
      throw error("writing " + path + ": tensor " + quote_text(t->name, name_quote_bytes) +
                  " appears twice");
    offset += bytes;
  }
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  for (const auto& [name, entry] : by_name) {
    const tensor_data& t = *entry.first;
    header[name] = {{"dtype", dtype_name(t.dtype)},
                    {"shape", t.shape},
                    {"data_offsets", {entry.second, entry.second + t.bytes}}};
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {  // e.g. a name that is not valid UTF-8
    throw error("writing " + path + ": cannot encode the header: " + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  const std::string length = le64(text.size());
  std::vector<std::string_view> chunks = {length, text};
  for (const tensor_data* t : layout)
    if (t->bytes != 0) chunks.emplace_back(static_cast<const char*>(t->data), t->bytes);
  write_file_atomic(path, chunks);
}

std::vector<std::string> sharded_checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto& [name, view] : tensors_) out.push_back(name);
  return out;
}

const tensor_view& sharded_checkpoint::get(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw error("no tensor " + quote_text(name, name_quote_bytes) + " in checkpoint " + dir_);
  return *it->second;
}

namespace {

json read_index(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error("cannot read " + path);
  json doc;
  try {
    doc = json::parse(in, json_depth_limit());
  } catch (const json::exception& e) {
    throw error("invalid JSON in " + path + ": " + e.what());
  } catch (const error& e) {
    throw error("invalid JSON in " + path + ": " + e.what());
  }
  if (!doc.is_object() || !doc.contains("weight_map") || !doc["weight_map"].is_object())
    throw error(path + " has no \"weight_map\" object");
  if (doc.contains("metadata") && !doc["metadata"].is_object() && !doc["metadata"].is_null())
    throw error(path + ": \"metadata\" is not an object");
  return doc;
}

}  // namespace

sharded_checkpoint load_sharded(const std::string& dir) {
  sharded_checkpoint ckpt;
  ckpt.dir_ = dir;
  const std::string index_path = dir + "/model.safetensors.index.json";
  if (!file_exists(index_path)) {
    const std::string single = dir + "/model.safetensors";
    if (!file_exists(single))
      throw error("checkpoint " + dir +
                  " has neither model.safetensors.index.json nor model.safetensors");
    ckpt.shards_.push_back(std::make_unique<safetensors_file>(single));
    for (const auto& name : ckpt.shards_[0]->names())
      ckpt.tensors_[name] = &ckpt.shards_[0]->get(name);
    return ckpt;
  }
  const json index = read_index(index_path);
  if (index.contains("metadata") && index["metadata"].is_object())
    ckpt.index_metadata_ = index["metadata"];
  std::map<std::string, const safetensors_file*> shard_by_file;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string())
      throw error(index_path + ": weight_map entry for " + quote_text(name, name_quote_bytes) +
                  " is not a string");
    const std::string shard = file.get<std::string>();
    // Shards live in the checkpoint directory; a path would let an index point anywhere.
    if (shard.empty() || shard.find('/') != std::string::npos || shard == "..")
      throw error(index_path + ": shard name " + quote_text(shard, name_quote_bytes) +
                  " is not a plain file name");
    if (shard_by_file.count(shard) == 0) {
      const std::string shard_path = dir + "/" + shard;
      if (!file_exists(shard_path))
        throw error(index_path + ": missing shard " + shard + " (listed for " +
                    quote_text(name, name_quote_bytes) + ")");
      ckpt.shards_.push_back(std::make_unique<safetensors_file>(shard_path));
      shard_by_file[shard] = ckpt.shards_.back().get();
    }
    const safetensors_file& f = *shard_by_file[shard];
    if (!f.contains(name))
      throw error(index_path + ": tensor " + quote_text(name, name_quote_bytes) + " is mapped to " +
                  shard + " but that shard does not contain it");
    ckpt.tensors_[name] = &f.get(name);
  }
  // A tensor stored twice would make the checkpoint ambiguous even if the map picks one.
  std::map<std::string, std::string> owner;
  for (const auto& [file, shard] : shard_by_file) {
    for (const std::string& name : shard->names()) {
      const auto [it, fresh] = owner.emplace(name, file);
      if (!fresh)
        throw error("checkpoint " + dir + ": tensor " + quote_text(name, name_quote_bytes) +
                    " is present in both " + it->second + " and " + file);
    }
  }
  return ckpt;
}

}  // namespace sparserl
