#pragma once
// Format arrays uploaded once and kept on the device by key, with their host copies, so 20
// programs on one matrix upload it once, and a program that writes through a const pointer is
// caught (and the arrays restored) before the next program sees them. The parent decides
// eviction (it mirrors this cache), so this class never drops an entry on its own.
#include <map>
#include <string>
#include <vector>

#include "eval/gpu_protocol.h"
#include "eval/gpu_worker/device_buffer.h"

namespace sparserl::gpu_worker {

struct uploaded_arg {
  kernel_arg host;       // kind, name, scalar and the pristine arrays
  device_buffer device;  // the arrays' device copy (none for scalars, input and output)
};

struct uploaded_data {
  std::vector<uploaded_arg> args;
  int64_t bytes = 0;
};

class data_cache {
 public:
  // Evicts q.evict, then uploads q.args under q.key (replacing an entry of the same key).
  void load(gpu_protocol::load_request&& q);
  uploaded_data* find(const std::string& key);
  // Copies every array back and compares it bitwise with the host copy; restores the arrays that
  // differ. True when none did.
  static bool unchanged(uploaded_data& data);

 private:
  std::map<std::string, uploaded_data> entries_;
};

}  // namespace sparserl::gpu_worker
