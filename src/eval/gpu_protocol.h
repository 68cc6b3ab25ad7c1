#pragma once
// The messages between gpu_runner (parent, no CUDA) and sparserl-gpu-worker (child, CUDA driver
// API), framed by eval/wire.h. Every message starts with a uint32 message kind; every reply after
// the hello starts with a status. The worker speaks first: one hello, then one reply per request.
//
//   hello            worker -> parent   device_info (ok = false: the device could not be opened)
//   load_data        key, keys to evict, kernel_args       -> status
//   run_program      key, cubin, entries, geometry, inputs -> status, trials, timing
//   baseline         CSR, input, k                         -> status, per-algorithm timings
//   copy_bandwidth   bytes                                 -> status, timing
//
// A status with fatal = true means the CUDA context is lost (a sticky error): the worker exits
// after sending it, and the parent replaces it.
#include <cstdint>
#include <string>
#include <vector>

#include "eval/runner.h"
#include "eval/timing_policy.h"
#include "eval/wire.h"
#include "kernel/abi.h"

namespace sparserl {

// What a worker's GPU is (its hello).
struct device_info {
  bool ok = false;
  std::string error;  // why the device could not be opened, when !ok
  int32_t ordinal = 0;
  std::string name;
  int32_t cc_major = 0, cc_minor = 0, sm_count = 0;
  int32_t driver_version = 0;
  int64_t total_memory = 0, l2_bytes = 0;
  int64_t max_shared_per_block = 0, max_shared_optin = 0;
  int32_t max_threads_per_block = 0;
  int32_t max_grid_x = 0, max_grid_y = 0, max_grid_z = 0;
};

// One cuSPARSE algorithm's timing and output (for a sanity check against the reference).
struct cusparse_algorithm {
  std::string name;  // "cusparseSpMV CSR_ALG1"
  bool ok = false;
  std::string failure;  // "CUSPARSE_STATUS_NOT_SUPPORTED in cusparseSpMM_bufferSize", ...
  timing_summary timing;
  std::vector<float> output;
};

struct cusparse_timings {
  bool ok = false;  // the request ran; individual algorithms may still have failed
  std::string failure;
  std::string log;
  std::vector<float> input;  // x (or B, cols x k row-major) the algorithms were given
  std::vector<cusparse_algorithm> algorithms;
  const cusparse_algorithm* best() const;  // fastest successful one, nullptr when none
};

// Device-to-device copy bandwidth, the roofline's ceiling: gbps counts bytes read + written.
struct bandwidth_result {
  bool ok = false;
  std::string failure;
  std::string log;
  int64_t bytes = 0;  // size of one copy
  timing_summary timing;
  double gbps = 0;  // 2 * bytes / median
};

namespace gpu_protocol {

enum class message : uint32_t {
  hello = 1,
  load_data = 2,
  run_program = 3,
  baseline = 4,
  copy_bandwidth = 5,
};

struct status {
  bool ok = true;
  std::string failure;
  bool fatal = false;
};

struct load_request {
  std::string key;
  std::vector<std::string> evict;  // keys the worker drops first (the parent keeps the LRU)
  std::vector<kernel_arg> args;
};

struct run_program_request {
  std::string key;  // the loaded data's key
  int32_t rows = 0, cols = 0, k = 1;
  std::vector<char> cubin;
  std::vector<std::string> entries;
  std::vector<launch_geometry> geometry;
  std::vector<std::vector<float>> inputs;
  uint32_t poison_bits = 0;
  int64_t output_length = 0;  // rows * k
  bool measure_time = false;
  timing_options timing;
  double launch_timeout_s = 0;  // per trial and per timed run; <= 0: none
  uint64_t timed_input_seed = 0;
  int32_t checked_timed_runs = 3;
};

struct run_program_reply {
  status result;
  std::vector<trial_result> trials;
  bool timed = false;
  timing_summary timing;
  std::vector<timed_run_check> checked_runs;
};

struct baseline_request {
  sparse_op op = sparse_op::spmv;
  int32_t k = 1;
  csr_matrix matrix;
  std::vector<float> input;
  timing_options timing;
};

struct copy_bandwidth_request {
  int64_t bytes = int64_t{1} << 30;
  timing_options timing;
};

// Encoders write the message kind first; decoders expect the reader just past it.
std::vector<char> encode_hello(const device_info& info);
std::vector<char> encode_load(const std::string& key, const std::vector<std::string>& evict,
                              const std::vector<kernel_arg>& args);
std::vector<char> encode_run(const run_program_request& request);
// The parent's form: the big arrays are referenced, not copied into a request first.
std::vector<char> encode_run(const std::string& key, const run_request& request,
                             const timing_options& timing, double launch_timeout_s);
std::vector<char> encode_baseline(sparse_op op, const csr_matrix& matrix, int32_t k,
                                  const std::vector<float>& input, const timing_options& timing);
std::vector<char> encode_copy_bandwidth(const copy_bandwidth_request& request);

std::vector<char> encode_status_reply(message kind, const status& s);
std::vector<char> encode_run_reply(const run_program_reply& reply);
std::vector<char> encode_baseline_reply(const status& s,
                                        const std::vector<cusparse_algorithm>& algorithms);
std::vector<char> encode_bandwidth_reply(const status& s, int64_t bytes,
                                         const timing_summary& timing);

// Reads the kind and checks it (throws sparserl::error on a mismatch).
message read_kind(wire::reader& r);
void expect_kind(wire::reader& r, message expected);

device_info decode_hello(wire::reader& r);
load_request decode_load(wire::reader& r);
run_program_request decode_run(wire::reader& r);
baseline_request decode_baseline(wire::reader& r);
copy_bandwidth_request decode_copy_bandwidth(wire::reader& r);

status decode_status(wire::reader& r);
run_program_reply decode_run_reply(wire::reader& r);  // after expect_kind(run_program)
std::vector<cusparse_algorithm> decode_algorithms(wire::reader& r);
timing_summary decode_timing_summary(wire::reader& r);

}  // namespace gpu_protocol
}  // namespace sparserl
