#include "train/checkpoint.h"

#include <torch/optim/optimizer.h>
#include <torch/serialize/archive.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/tensor_file.h"
#include "sparse/error.h"
#include "sparse/gzip_file.h"

namespace fs = std::filesystem;

namespace sparserl::train {
namespace {

constexpr const char* manifest_name = "manifest.json";

std::string step_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%09lld", static_cast<long long>(step));
  return buf;
}

uint32_t file_crc(const std::string& path, uint64_t& size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(path + ": cannot be read");
  std::vector<char> buf(1 << 20);
  uLong crc = crc32(0L, Z_NULL, 0);
  size = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(n));
    size += static_cast<uint64_t>(n);
  }
  return static_cast<uint32_t>(crc);
}

std::map<std::string, torch::Tensor> generator_states() {
  std::map<std::string, torch::Tensor> out;
  out["rng.cpu"] = at::detail::getDefaultCPUGenerator().get_state();
  return out;
}

void set_generator_states(const std::map<std::string, torch::Tensor>& tensors) {
  auto it = tensors.find("rng.cpu");
  if (it == tensors.end()) return;
  at::Generator cpu = at::detail::getDefaultCPUGenerator();  // a handle to the global one
  cpu.set_state(it->second);
}

void write_text(const std::string& path, const std::string& text) {
  write_file_atomic(path, {text});
}

void fsync_path(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw error(path + ": cannot be opened to sync");
  const int rc = ::fsync(fileno(f));
  std::fclose(f);
  if (rc != 0) throw error(path + ": fsync failed");
}

void verify_manifest(const std::string& path) {
  const std::string manifest_path = path + "/" + manifest_name;
  if (!fs::exists(manifest_path))
    throw error("checkpoint " + path + ": " + manifest_name +
                " is missing (incomplete checkpoint)");
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(read_file_decompressed(manifest_path, 1 << 20));
  } catch (const nlohmann::json::exception& e) {
    throw error(manifest_path + ": not valid JSON (" + e.what() + ")");
  }
  if (!manifest.contains("files") || !manifest["files"].is_object())
    throw error(manifest_path + ": no \"files\" object");
  for (const auto& [name, entry] : manifest["files"].items()) {
    const std::string file = path + "/" + name;
    if (!fs::exists(file)) throw error("checkpoint " + path + ": " + name + " is missing");
    uint64_t size = 0;
    const uint32_t crc = file_crc(file, size);
    if (size != entry.value("bytes", uint64_t{0}))
      throw error("checkpoint " + path + ": " + name + " has " + std::to_string(size) +
                  " bytes, the manifest says " + std::to_string(entry.value("bytes", uint64_t{0})) +
                  " (truncated or altered)");
    if (crc != entry.value("crc32", uint32_t{0}))
      throw error("checkpoint " + path + ": " + name + " fails its CRC-32 check (corrupt)");
  }
}

}  // namespace

checkpoint_store::checkpoint_store(std::string dir, int keep_last)
    : dir_(std::move(dir)), keep_last_(keep_last) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw error(dir_ + ": cannot create the checkpoint directory (" + ec.message() + ")");
}

std::string checkpoint_store::save(const checkpoint_contents& contents,
                                   const torch::optim::Optimizer& optimizer) {
  const std::string final_path = dir_ + "/" + step_name(contents.step);
  const std::string temp_path = final_path + ".tmp-" + std::to_string(::getpid());
  fs::remove_all(temp_path);
  fs::create_directories(temp_path);
  save_tensor_file(temp_path + "/tensors.safetensors", contents.tensors);
  save_tensor_file(temp_path + "/rng.safetensors", generator_states());
  {
    torch::serialize::OutputArchive archive;
    optimizer.save(archive);
    archive.save_to(temp_path + "/optimizer.pt");
    fsync_path(temp_path + "/optimizer.pt");
  }
  nlohmann::json state = contents.state;
  state["step"] = contents.step;
  write_text(temp_path + "/state.json", state.dump(2) + "\n");
  nlohmann::json manifest = {{"step", contents.step}, {"files", nlohmann::json::object()}};
  for (const char* name :
       {"tensors.safetensors", "rng.safetensors", "optimizer.pt", "state.json"}) {
    uint64_t size = 0;
    const uint32_t crc = file_crc(temp_path + "/" + name, size);
    manifest["files"][name] = {{"bytes", size}, {"crc32", crc}};
  }
  write_text(temp_path + "/" + manifest_name, manifest.dump(2) + "\n");
  fs::remove_all(final_path);  // a stale one from an earlier run of the same step
  fs::rename(temp_path, final_path);
  fsync_path(dir_);
  if (keep_last_ > 0) {
    std::vector<std::string> all = list();
    for (size_t i = 0; i + static_cast<size_t>(keep_last_) < all.size(); ++i)
      fs::remove_all(all[i]);
  }
  return final_path;
}

std::vector<std::string> checkpoint_store::list() const {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("step-", 0) == 0 &&
        name.find(".tmp") == std::string::npos)
      out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());  // zero-padded step numbers sort by step
  return out;
}

std::optional<std::string> checkpoint_store::latest() const {
  std::vector<std::string> all = list();
  if (all.empty()) return std::nullopt;
  return all.back();
}

checkpoint_contents load_checkpoint(const std::string& path, torch::optim::Optimizer& optimizer) {
  verify_manifest(path);
  checkpoint_contents out;
  nlohmann::json state;
  try {
    state = nlohmann::json::parse(read_file_decompressed(path + "/state.json", 64 << 20));
  } catch (const nlohmann::json::exception& e) {
    throw error(path + "/state.json: not valid JSON (" + e.what() + ")");
  }
  out.step = state.value("step", int64_t{0});
  out.state = state;
  out.tensors = load_tensor_file(path + "/tensors.safetensors").tensors;
  loaded_tensors rng = load_tensor_file(path + "/rng.safetensors");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path + "/optimizer.pt");
    optimizer.load(archive);
  } catch (const c10::Error& e) {
    throw error(path + "/optimizer.pt: does not match this run's optimizer (" +
                std::string(e.what_without_backtrace()) + ")");
  }
  set_generator_states(rng.tensors);
  return out;
}

void restore_tensors(const std::map<std::string, torch::Tensor>& loaded,
                     const std::map<std::string, torch::Tensor>& params, const std::string& path) {
  for (const auto& [name, param] : params) {
    auto it = loaded.find(name);
    if (it == loaded.end()) throw error("checkpoint " + path + ": tensor " + name + " is missing");
    if (it->second.sizes() != param.sizes())
      throw error("checkpoint " + path + ": tensor " + name + " has the wrong shape");
  }
  torch::NoGradGuard no_grad;
  for (const auto& [name, param] : params) param.copy_(loaded.at(name));
}

}  // namespace sparserl::train
