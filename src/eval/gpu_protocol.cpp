#include "eval/gpu_protocol.h"

#include <cstring>

namespace sparserl {

const cusparse_algorithm* cusparse_timings::best() const {
  const cusparse_algorithm* best = nullptr;
  for (const cusparse_algorithm& a : algorithms)
    if (a.ok && (!best || a.timing.median_ms < best->timing.median_ms)) best = &a;
  return best;
}

namespace gpu_protocol {

namespace {

void put_bool(wire::writer& w, bool b) { w.put<uint8_t>(b ? 1 : 0); }
bool get_bool(wire::reader& r) { return r.get<uint8_t>() != 0; }

void put_kind(wire::writer& w, message kind) { w.put<uint32_t>(static_cast<uint32_t>(kind)); }

void put_status(wire::writer& w, const status& s) {
  put_bool(w, s.ok);
  w.put_string(s.failure);
  put_bool(w, s.fatal);
}

void put_strings(wire::writer& w, const std::vector<std::string>& v) {
  w.put<uint64_t>(v.size());
  for (const std::string& s : v) w.put_string(s);
}

std::vector<std::string> get_strings(wire::reader& r) {
  const uint64_t n = r.get<uint64_t>();
  std::vector<std::string> v;
  for (uint64_t i = 0; i < n; ++i) v.push_back(r.get_string());  // each read is bounds-checked
  return v;
}

void put_floats_list(wire::writer& w, const std::vector<std::vector<float>>& v) {
  w.put<uint64_t>(v.size());
  for (const auto& x : v) w.put_vector(x);
}

std::vector<std::vector<float>> get_floats_list(wire::reader& r) {
  const uint64_t n = r.get<uint64_t>();
  std::vector<std::vector<float>> v;
  for (uint64_t i = 0; i < n; ++i) v.push_back(r.get_vector<float>());
  return v;
}

void put_timing_options(wire::writer& w, const timing_options& o) {
  w.put<int32_t>(o.warmup);
  w.put<int32_t>(o.min_reps);
  w.put<int32_t>(o.max_reps);
  w.put<double>(o.min_total_ms);
  w.put<double>(o.max_wall_s);
  w.put<int32_t>(static_cast<int32_t>(o.flush));
}

timing_options get_timing_options(wire::reader& r) {
  timing_options o;
  o.warmup = r.get<int32_t>();
  o.min_reps = r.get<int32_t>();
  o.max_reps = r.get<int32_t>();
  o.min_total_ms = r.get<double>();
  o.max_wall_s = r.get<double>();
  const int32_t flush = r.get<int32_t>();
  if (flush < 0 || flush > 2)
    throw error("gpu protocol: bad L2 flush mode " + std::to_string(flush));
  o.flush = static_cast<l2_flush_mode>(flush);
  validate_timing_options(o);
  return o;
}

void put_timing_summary(wire::writer& w, const timing_summary& s) {
  w.put<double>(s.median_ms);
  w.put<double>(s.min_ms);
  w.put<double>(s.p90_ms);
  w.put<int32_t>(s.reps);
  put_bool(w, s.l2_flushed);
  w.put_string(s.method);
}

void put_arg(wire::writer& w, const kernel_arg& a) {
  w.put<int32_t>(static_cast<int32_t>(a.kind));
  w.put_string(a.name);
  w.put<int32_t>(a.scalar);
  w.put_vector(a.ints);
  w.put_vector(a.floats);
  w.put_vector(a.shorts);
}

kernel_arg get_arg(wire::reader& r) {
  const int32_t kind = r.get<int32_t>();
  if (kind < 0 || kind > static_cast<int32_t>(arg_kind::scratch))
    throw error("gpu protocol: bad kernel argument kind " + std::to_string(kind));
  kernel_arg a{static_cast<arg_kind>(kind), "", 0, {}, {}, {}};
  a.name = r.get_string();
  a.scalar = r.get<int32_t>();
  a.ints = r.get_vector<int32_t>();
  a.floats = r.get_vector<float>();
  a.shorts = r.get_vector<uint16_t>();
  return a;
}

void put_run_fields(wire::writer& w, const std::string& key, int32_t rows, int32_t cols, int32_t k,
                    const std::vector<char>& cubin, const std::vector<std::string>& entries,
                    const std::vector<launch_geometry>& geometry,
                    const std::vector<std::vector<float>>& inputs, uint32_t poison_bits,
                    int64_t output_length, bool measure_time, const timing_options& timing,
                    double launch_timeout_s, uint64_t timed_input_seed,
                    int32_t checked_timed_runs) {
  put_kind(w, message::run_program);
  w.put_string(key);
  w.put<int32_t>(rows);
  w.put<int32_t>(cols);
  w.put<int32_t>(k);
  w.put_vector(cubin);
  put_strings(w, entries);
  w.put_vector(geometry);
  put_floats_list(w, inputs);
  w.put<uint32_t>(poison_bits);
  w.put<int64_t>(output_length);
  put_bool(w, measure_time);
  put_timing_options(w, timing);
  w.put<double>(launch_timeout_s);
  w.put<uint64_t>(timed_input_seed);
  w.put<int32_t>(checked_timed_runs);
}

}  // namespace

std::vector<char> encode_hello(const device_info& d) {
  wire::writer w;
  put_kind(w, message::hello);
  put_bool(w, d.ok);
  w.put_string(d.error);
  w.put<int32_t>(d.ordinal);
  w.put_string(d.name);
  w.put<int32_t>(d.cc_major);
  w.put<int32_t>(d.cc_minor);
  w.put<int32_t>(d.sm_count);
  w.put<int32_t>(d.driver_version);
  w.put<int64_t>(d.total_memory);
  w.put<int64_t>(d.l2_bytes);
  w.put<int64_t>(d.max_shared_per_block);
  w.put<int64_t>(d.max_shared_optin);
  w.put<int32_t>(d.max_threads_per_block);
  w.put<int32_t>(d.max_grid_x);
  w.put<int32_t>(d.max_grid_y);
  w.put<int32_t>(d.max_grid_z);
  return w.take();
}

device_info decode_hello(wire::reader& r) {
  device_info d;
  d.ok = get_bool(r);
  d.error = r.get_string();
  d.ordinal = r.get<int32_t>();
  d.name = r.get_string();
  d.cc_major = r.get<int32_t>();
  d.cc_minor = r.get<int32_t>();
  d.sm_count = r.get<int32_t>();
  d.driver_version = r.get<int32_t>();
  d.total_memory = r.get<int64_t>();
  d.l2_bytes = r.get<int64_t>();
  d.max_shared_per_block = r.get<int64_t>();
  d.max_shared_optin = r.get<int64_t>();
  d.max_threads_per_block = r.get<int32_t>();
  d.max_grid_x = r.get<int32_t>();
  d.max_grid_y = r.get<int32_t>();
  d.max_grid_z = r.get<int32_t>();
  return d;
}

std::vector<char> encode_load(const std::string& key, const std::vector<std::string>& evict,
                              const std::vector<kernel_arg>& args) {
  wire::writer w;
  put_kind(w, message::load_data);
  w.put_string(key);
  put_strings(w, evict);
  w.put<uint64_t>(args.size());
  for (const kernel_arg& a : args) put_arg(w, a);
  return w.take();
}

load_request decode_load(wire::reader& r) {
  load_request q;
  q.key = r.get_string();
  q.evict = get_strings(r);
  const uint64_t n = r.get<uint64_t>();
  for (uint64_t i = 0; i < n; ++i) q.args.push_back(get_arg(r));
  return q;
}

std::vector<char> encode_run(const run_program_request& q) {
  wire::writer w;
  put_run_fields(w, q.key, q.rows, q.cols, q.k, q.cubin, q.entries, q.geometry, q.inputs,
                 q.poison_bits, q.output_length, q.measure_time, q.timing, q.launch_timeout_s,
                 q.timed_input_seed, q.checked_timed_runs);
  return w.take();
}

std::vector<char> encode_run(const std::string& key, const run_request& q,
                             const timing_options& timing, double launch_timeout_s) {
  static const std::vector<char> no_cubin;
  uint32_t poison_bits = 0;
  std::memcpy(&poison_bits, &q.poison, sizeof(poison_bits));
  const int64_t k = q.op == sparse_op::spmm ? q.k : 1;
  wire::writer w;
  put_run_fields(w, key, q.rows, q.cols, static_cast<int32_t>(k), q.cubin ? *q.cubin : no_cubin,
                 q.entries, q.geometry, q.inputs, poison_bits, int64_t{q.rows} * k, q.measure_time,
                 timing, launch_timeout_s, q.timed_input_seed, q.checked_timed_runs);
  return w.take();
}

run_program_request decode_run(wire::reader& r) {
  run_program_request q;
  q.key = r.get_string();
  q.rows = r.get<int32_t>();
  q.cols = r.get<int32_t>();
  q.k = r.get<int32_t>();
  q.cubin = r.get_vector<char>();
  q.entries = get_strings(r);
  q.geometry = r.get_vector<launch_geometry>();
  q.inputs = get_floats_list(r);
  q.poison_bits = r.get<uint32_t>();
  q.output_length = r.get<int64_t>();
  q.measure_time = get_bool(r);
  q.timing = get_timing_options(r);
  q.launch_timeout_s = r.get<double>();
  q.timed_input_seed = r.get<uint64_t>();
  q.checked_timed_runs = r.get<int32_t>();
  return q;
}

std::vector<char> encode_baseline(sparse_op op, const csr_matrix& a, int32_t k,
                                  const std::vector<float>& input, const timing_options& timing) {
  wire::writer w;
  put_kind(w, message::baseline);
  w.put<int32_t>(static_cast<int32_t>(op));
  w.put<int32_t>(k);
  w.put<int32_t>(a.rows);
  w.put<int32_t>(a.cols);
  w.put_vector(a.row_ptr);
  w.put_vector(a.col_idx);
  w.put_vector(a.values);
  w.put_vector(input);
  put_timing_options(w, timing);
  return w.take();
}

baseline_request decode_baseline(wire::reader& r) {
  baseline_request q;
  const int32_t op = r.get<int32_t>();
  if (op != static_cast<int32_t>(sparse_op::spmv) && op != static_cast<int32_t>(sparse_op::spmm))
    throw error("gpu protocol: bad op " + std::to_string(op));
  q.op = static_cast<sparse_op>(op);
  q.k = r.get<int32_t>();
  q.matrix.rows = r.get<int32_t>();
  q.matrix.cols = r.get<int32_t>();
  q.matrix.row_ptr = r.get_vector<int32_t>();
  q.matrix.col_idx = r.get_vector<int32_t>();
  q.matrix.values = r.get_vector<float>();
  q.input = r.get_vector<float>();
  q.timing = get_timing_options(r);
  return q;
}

std::vector<char> encode_copy_bandwidth(const copy_bandwidth_request& q) {
  wire::writer w;
  put_kind(w, message::copy_bandwidth);
  w.put<int64_t>(q.bytes);
  put_timing_options(w, q.timing);
  return w.take();
}

copy_bandwidth_request decode_copy_bandwidth(wire::reader& r) {
  copy_bandwidth_request q;
  q.bytes = r.get<int64_t>();
  q.timing = get_timing_options(r);
  return q;
}

std::vector<char> encode_status_reply(message kind, const status& s) {
  wire::writer w;
  put_kind(w, kind);
  put_status(w, s);
  return w.take();
}

std::vector<char> encode_run_reply(const run_program_reply& reply) {
  wire::writer w;
  put_kind(w, message::run_program);
  put_status(w, reply.result);
  w.put<uint64_t>(reply.trials.size());
  for (const trial_result& t : reply.trials) {
    w.put_vector(t.output);
    put_bool(w, t.input_unchanged);
    put_bool(w, t.format_unchanged);
  }
  put_bool(w, reply.timed);
  put_timing_summary(w, reply.timing);
  w.put<uint64_t>(reply.checked_runs.size());
  for (const timed_run_check& c : reply.checked_runs) {
    w.put<int32_t>(c.run);
    w.put_vector(c.input);
    w.put_vector(c.output);
    put_bool(w, c.input_unchanged);
  }
  return w.take();
}

run_program_reply decode_run_reply(wire::reader& r) {
  run_program_reply reply;
  reply.result = decode_status(r);
  const uint64_t n = r.get<uint64_t>();
  for (uint64_t i = 0; i < n; ++i) {
    trial_result t;
    t.output = r.get_vector<float>();
    t.input_unchanged = get_bool(r);
    t.format_unchanged = get_bool(r);
    reply.trials.push_back(std::move(t));
  }
  reply.timed = get_bool(r);
  reply.timing = decode_timing_summary(r);
  const uint64_t checked = r.get<uint64_t>();
  for (uint64_t i = 0; i < checked; ++i) {
    timed_run_check c;
    c.run = r.get<int32_t>();
    c.input = r.get_vector<float>();
    c.output = r.get_vector<float>();
    c.input_unchanged = get_bool(r);
    reply.checked_runs.push_back(std::move(c));
  }
  return reply;
}

std::vector<char> encode_baseline_reply(const status& s,
                                        const std::vector<cusparse_algorithm>& algorithms) {
  wire::writer w;
  put_kind(w, message::baseline);
  put_status(w, s);
  w.put<uint64_t>(algorithms.size());
  for (const cusparse_algorithm& a : algorithms) {
    w.put_string(a.name);
    put_bool(w, a.ok);
    w.put_string(a.failure);
    put_timing_summary(w, a.timing);
    w.put_vector(a.output);
  }
  return w.take();
}

std::vector<cusparse_algorithm> decode_algorithms(wire::reader& r) {
  const uint64_t n = r.get<uint64_t>();
  std::vector<cusparse_algorithm> v;
  for (uint64_t i = 0; i < n; ++i) {
    cusparse_algorithm a;
    a.name = r.get_string();
    a.ok = get_bool(r);
    a.failure = r.get_string();
    a.timing = decode_timing_summary(r);
    a.output = r.get_vector<float>();
    v.push_back(std::move(a));
  }
  return v;
}

std::vector<char> encode_bandwidth_reply(const status& s, int64_t bytes,
                                         const timing_summary& timing) {
  wire::writer w;
  put_kind(w, message::copy_bandwidth);
  put_status(w, s);
  w.put<int64_t>(bytes);
  put_timing_summary(w, timing);
  return w.take();
}

message read_kind(wire::reader& r) {
  const uint32_t kind = r.get<uint32_t>();
  if (kind < static_cast<uint32_t>(message::hello) ||
      kind > static_cast<uint32_t>(message::copy_bandwidth))
    throw error("gpu protocol: unknown message kind " + std::to_string(kind));
  return static_cast<message>(kind);
}

void expect_kind(wire::reader& r, message expected) {
  const message got = read_kind(r);
  if (got != expected)
    throw error("gpu protocol: expected message " +
                std::to_string(static_cast<uint32_t>(expected)) + ", got " +
                std::to_string(static_cast<uint32_t>(got)));
}

status decode_status(wire::reader& r) {
  status s;
  s.ok = get_bool(r);
  s.failure = r.get_string();
  s.fatal = get_bool(r);
  return s;
}

timing_summary decode_timing_summary(wire::reader& r) {
  timing_summary s;
  s.median_ms = r.get<double>();
  s.min_ms = r.get<double>();
  s.p90_ms = r.get<double>();
  s.reps = r.get<int32_t>();
  s.l2_flushed = get_bool(r);
  s.method = r.get_string();
  return s;
}

}  // namespace gpu_protocol
}  // namespace sparserl
