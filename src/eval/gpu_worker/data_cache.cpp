#include "eval/gpu_worker/data_cache.h"

#include <cstring>

namespace sparserl::gpu_worker {

namespace {

const void* host_bytes(const kernel_arg& a) { return a.array_data(); }
size_t array_bytes(const kernel_arg& a) { return a.array_bytes(); }
bool is_array(const kernel_arg& a) { return a.is_array(); }

}  // namespace

void data_cache::load(gpu_protocol::load_request&& q) {
  for (const std::string& key : q.evict) entries_.erase(key);
  entries_.erase(q.key);  // free the old copy before allocating the new one
  uploaded_data data;
  for (kernel_arg& a : q.args) {
    uploaded_arg u{std::move(a), device_buffer()};
    if (is_array(u.host)) {
      u.device = device_buffer(array_bytes(u.host));
      u.device.upload(host_bytes(u.host), "format array " + u.host.name);
      data.bytes += static_cast<int64_t>(array_bytes(u.host));
    }
    data.args.push_back(std::move(u));
  }
  entries_[q.key] = std::move(data);
}

uploaded_data* data_cache::find(const std::string& key) {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

bool data_cache::unchanged(uploaded_data& data) {
  bool same = true;
  std::vector<char> back;
  for (uploaded_arg& u : data.args) {
    if (!is_array(u.host)) continue;
    back.resize(u.device.bytes());
    u.device.download(back.data(), "format array " + u.host.name);
    if (std::memcmp(back.data(), host_bytes(u.host), back.size()) != 0) {
      same = false;
      u.device.upload(host_bytes(u.host), "format array " + u.host.name + " (restore)");
    }
  }
  return same;
}

}  // namespace sparserl::gpu_worker
