#include "eval/cpu_runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "eval/cpu_program_source.h"
#include "eval/cpu_protocol.h"
#include "eval/elf_screen.h"
#include "eval/sandbox.h"
#include "eval/wire.h"
#include "sparse/error.h"
#include "sparse/gzip_file.h"

#ifndef SPARSERL_CPU_CHILD
#define SPARSERL_CPU_CHILD ""
#endif
#ifndef SPARSERL_CUDA_EMULATION_HEADER
#define SPARSERL_CUDA_EMULATION_HEADER ""
#endif

namespace sparserl {

namespace fs = std::filesystem;

namespace {

constexpr int64_t max_object_bytes = int64_t{512} << 20;
// Beyond the trial limit: copying the input in, poisoning the output and writing the trial's reply.
constexpr double trial_report_slack_s = 0.25;

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// FNV-1a: only an index into the cache (hits are confirmed by comparing the whole source).
uint64_t fnv1a(const std::string& a, const std::string& b = "") {
  uint64_t h = 1469598103934665603ull;
  for (const std::string* s : {&a, &b})
    for (unsigned char c : *s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string read_file(const std::string& path, int64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error("cpu runner: cannot read " + path + ": " + std::strerror(errno));
  std::string s;
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    s.append(buf, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(s.size()) > max_bytes)
      throw error("cpu runner: " + path + " is larger than " + std::to_string(max_bytes) +
                  " bytes");
  }
  return s;
}

bool file_equals(const std::string& path, const std::string& content) {
  std::error_code ec;
  if (fs::file_size(path, ec) != content.size() || ec) return false;
  return read_file(path, static_cast<int64_t>(content.size())) == content;
}

// $`variable` when set, else the build tree's `built`: an installed copy (the Python package
// ships the child and the header inside itself, python/sparserl/_helpers.py) names its own.
std::string installed_path(const char* variable, const char* built) {
  const char* set = std::getenv(variable);
  return set && *set ? set : built;
}

std::string find_on_path(const std::vector<std::string>& names) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::vector<std::string> list;
  for (std::string d; std::getline(dirs, d, ':');) list.push_back(d.empty() ? "." : d);
  for (const std::string& name : names)
    for (const std::string& d : list) {
      const std::string candidate = (fs::absolute(d) / name).string();
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  return "";
}

// The cache holds code we later execute: it must be ours and writable by nobody else.
void prepare_cache_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    throw error("cpu runner: cannot create cache directory " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    throw error("cpu runner: cache directory " + dir + " is not a directory owned by this user");
  // 0755: the sandboxed child (nobody) reads the objects; only we write.
  if ((st.st_mode & 07777) != 0755 && ::chmod(dir.c_str(), 0755) != 0)
    throw error("cpu runner: cannot chmod cache directory " + dir + ": " + std::strerror(errno));
}

class scratch_dir {
 public:
  explicit scratch_dir(const std::string& parent) {
    std::string pattern = parent + "/build-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw error("cpu runner: mkdtemp in " + parent + " failed: " + std::strerror(errno));
    path_ = pattern;
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find("error") != std::string::npos) return line;
  return log.substr(0, log.find('\n'));
}

cpu_protocol::arg_type protocol_type(arg_kind kind) {
  switch (kind) {
    case arg_kind::i32:
      return cpu_protocol::arg_type::i32;
    case arg_kind::i32_array:
      return cpu_protocol::arg_type::i32_array;
    case arg_kind::f32_array:
      return cpu_protocol::arg_type::f32_array;
    case arg_kind::input:
      return cpu_protocol::arg_type::input;
    case arg_kind::output:
      return cpu_protocol::arg_type::output;
    case arg_kind::u16_array:
      return cpu_protocol::arg_type::u16_array;
    case arg_kind::scratch:
      return cpu_protocol::arg_type::scratch;
  }
  return cpu_protocol::arg_type::i32;
}

int64_t output_length(const run_request& r) {
  return int64_t{r.rows} * (r.op == sparse_op::spmm ? r.k : 1);
}

int64_t input_length(const run_request& r) {
  return int64_t{r.cols} * (r.op == sparse_op::spmm ? r.k : 1);
}

void validate(const run_request& r) {
  if (!r.args) throw error("cpu runner: request without format arguments");
  if (!r.program && r.device_source.empty()) throw error("cpu runner: request without a program");
  if (r.entries.empty() || r.entries.size() != r.geometry.size())
    throw error("cpu runner: " + std::to_string(r.entries.size()) + " entry points but " +
                std::to_string(r.geometry.size()) + " launch geometries");
  if (r.inputs.empty()) throw error("cpu runner: request without trial inputs");
  if (r.rows < 0 || r.cols < 0 || r.k < 1) throw error("cpu runner: bad request dimensions");
  for (size_t t = 0; t < r.inputs.size(); ++t)
    if (static_cast<int64_t>(r.inputs[t].size()) != input_length(r))
      throw error("cpu runner: trial " + std::to_string(t) + " input has " +
                  std::to_string(r.inputs[t].size()) + " values, expected " +
                  std::to_string(input_length(r)));
}

cpu_protocol::request protocol_request(const run_request& r, const run_limits& limits,
                                       int64_t stack_bytes) {
  cpu_protocol::request p;
  for (const launch_geometry& g : r.geometry)
    p.launches.push_back({g.grid_x, g.grid_y, g.grid_z, g.block_x, g.shared_bytes});
  for (const kernel_arg& a : r.args->args)
    p.args.push_back({protocol_type(a.kind), a.name, a.scalar, a.ints, a.floats, a.shorts});
  p.output_length = static_cast<uint64_t>(output_length(r));
  p.inputs = r.inputs;
  std::memcpy(&p.poison_bits, &r.poison, sizeof(p.poison_bits));
  p.stack_bytes = static_cast<uint64_t>(stack_bytes);
  p.max_log_bytes = static_cast<uint64_t>(std::max<int64_t>(0, limits.max_log_bytes));
  return p;
}

// The failure a child's end means when it sent no failure of its own.
std::string signal_failure(int sig) {
  switch (sig) {
    case SIGKILL:
      return "killed by the sandbox: the program made a system call (files, processes, network "
             "and memory allocation are not available to device code) or ran out of memory";
    case SIGSYS:  // the seccomp filter's, when device code got past its SIGSYS handler
      return "sandbox: forbidden system call (SIGSYS)";
    case SIGSEGV:
      return "out-of-bounds memory access (SIGSEGV)";
    case SIGBUS:
      return "out-of-bounds memory access (SIGBUS)";
    case SIGFPE:
      return "arithmetic exception (SIGFPE)";
    case SIGILL:
      return "illegal instruction (SIGILL)";
    case SIGXCPU:
      return "CPU time limit exceeded (SIGXCPU)";
    case SIGABRT:
      return "aborted (SIGABRT)";
    default:
      return "emulator killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
}

void append_capped(std::string& log, const std::string& text, int64_t cap) {
  if (text.empty()) return;
  if (!log.empty() && log.back() != '\n') log += '\n';
  const int64_t room = cap - static_cast<int64_t>(log.size());
  if (room <= 0) return;
  if (static_cast<int64_t>(text.size()) <= room) {
    log += text;
  } else {
    log.append(text, 0, static_cast<size_t>(room));
    log += "\n[log truncated]";
  }
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", s);
  return buf;
}

// Reads the child's reply frames into `result`; returns the child's own failure message, if any.
std::string collect_replies(const sandbox_result& sr, run_result& result, int64_t log_cap,
                            bool& partial) {
  std::string failure;
  for (const std::vector<char>& frame : cpu_protocol::split_frames(sr.out, &partial)) {
    cpu_protocol::reply rep;
    try {
      rep = cpu_protocol::decode_reply(frame);
    } catch (const error& e) {
      return std::string("emulator reply malformed: ") + e.what();
    }
    switch (rep.kind) {
      case cpu_protocol::frame_kind::note:
        append_capped(result.log, "emulator: " + rep.text, log_cap);
        break;
      case cpu_protocol::frame_kind::log:
        append_capped(result.log, "device printf output:\n" + rep.text, log_cap);
        break;
      case cpu_protocol::frame_kind::failure:
        failure = rep.text;
        break;
      case cpu_protocol::frame_kind::started:
        break;
      case cpu_protocol::frame_kind::trial:
        result.trials.push_back({std::move(rep.output), rep.input_unchanged, rep.format_unchanged});
        break;
    }
  }
  return failure;
}

}  // namespace

cpu_runner::cpu_runner(cpu_runner_options options) : options_(std::move(options)) {
  compiler_ = options_.compiler.empty() ? find_on_path({"g++", "c++"}) : options_.compiler;
  if (compiler_.empty() || compiler_[0] != '/' || ::access(compiler_.c_str(), X_OK) != 0)
    throw error("cpu runner: no C++ compiler (g++) found; set cpu_runner_options::compiler");
  const std::string header_path =
      !options_.emulation_header.empty()
          ? options_.emulation_header
          : installed_path("SPARSERL_CUDA_EMULATION_HEADER", SPARSERL_CUDA_EMULATION_HEADER);
  header_ = read_file(header_path, int64_t{1} << 20);
  cache_dir_ =
      options_.cache_dir.empty()
          ? (fs::temp_directory_path() / ("sparserl-cpu-cache-" + std::to_string(::geteuid())))
                .string()
          : options_.cache_dir;
  prepare_cache_dir(cache_dir_);
  // The child runs from a private copy: reachable by nobody (the build tree may not be), and
  // immune to a rebuild while runs are in flight.
  const std::string child_source = !options_.child_path.empty()
                                       ? options_.child_path
                                       : installed_path("SPARSERL_CPU_CHILD", SPARSERL_CPU_CHILD);
  const std::string child_bytes = read_file(child_source, int64_t{256} << 20);
  const std::string child_hash = hex64(fnv1a(child_bytes));
  child_ = cache_dir_ + "/sparserl-cpu-child-" + child_hash;
  if (!file_equals(child_, child_bytes)) write_file_atomic(child_, {child_bytes}, 0755);
  build_identity_ = compiler_ + "\n" + child_hash;
  for (const std::string& f : options_.compile_flags) build_identity_ += "\n" + f;
}

bool cpu_runner::cached_object(const std::string& source, const std::string& key,
                               std::string& path) const {
  path = cache_dir_ + "/" + key + ".so";
  std::error_code ec;
  return fs::exists(path, ec) && file_equals(cache_dir_ + "/" + key + ".cpp", source);
}

std::string cpu_runner::publish(const std::string& key, const std::string& source,
                                const std::vector<char>& object) const {
  // Source first: an object is only ever found next to the source it was built from.
  write_file_atomic(cache_dir_ + "/" + key + ".cpp", {source}, 0644);
  const std::string path = cache_dir_ + "/" + key + ".so";
  write_file_atomic(path, {std::string_view(object.data(), object.size())}, 0644);
  return path;
}

cpu_build cpu_runner::build_source(const std::string& source) {
  cpu_build b;
  const std::string key = hex64(fnv1a(build_identity_, source));
  if (cached_object(source, key, b.object_path)) {
    b.ok = b.cached = true;
    return b;
  }
  const scratch_dir work(cache_dir_);
  write_file_atomic(work.path() + "/program.cpp", {source}, 0644);
  std::vector<std::string> argv = {compiler_};
  argv.insert(argv.end(), options_.compile_flags.begin(), options_.compile_flags.end());
  for (const char* f :
       {"-w", "-fPIC", "-shared", "-nostartfiles", "-fno-gnu-unique", "-fmax-errors=20",
        "-fdiagnostics-color=never", "-o", "program.so", "program.cpp"})
    argv.emplace_back(f);
  sandbox_options o;
  o.wall_timeout_s = options_.compile_timeout_s;
  o.address_space_bytes = options_.compile_memory_bytes;
  o.file_size_bytes = max_object_bytes;
  o.open_files = 256;
  o.processes = -1;  // the driver starts cc1plus, as, collect2 and ld
  o.isolate_network = options_.isolate_network;
  o.drop_privileges = options_.drop_privileges;
  o.work_dir = work.path();
  o.writable_work_dir = true;
  o.env = {"PATH=" + fs::path(compiler_).parent_path().string() + ":/usr/bin:/bin", "LC_ALL=C",
           "TMPDIR=" + work.path()};
  const sandbox_result r = run_sandboxed(argv, {}, o);
  if (!r.started) throw error("cpu runner: cannot start the compiler: " + r.failure);
  b.log = r.err;
  if (r.timed_out) {
    b.failure = "emulator compile " + r.describe(options_.compile_timeout_s);
    return b;
  }
  if (r.exit_code != 0) {
    b.failure = "emulator compile error: " + first_error_line(r.err);
    return b;
  }
  // Our own copy is screened and published, never the file the sandbox user could still touch.
  const std::string image = read_file(work.path() + "/program.so", max_object_bytes);
  const std::vector<char> object(image.begin(), image.end());
  if (const std::string why = screen_shared_object(object); !why.empty()) {
    b.failure = "rejected: the compiled program " + why;
    return b;
  }
  b.object_path = publish(key, source, object);
  b.ok = true;
  return b;
}

cpu_build cpu_runner::build(const run_request& request) {
  validate(request);
  const std::string& device = request.device_source.empty() && request.program
                                  ? request.program->source
                                  : request.device_source;
  cpu_build b =
      build_source(emulated_program_source(header_, device, request.entries, request.args->args));
  if (b.ok || b.log.find("section type conflict") == std::string::npos) return b;
  // g++ cannot put these __shared__ variables in one section: use plain statics instead.
  cpu_build retry = build_source(
      emulated_program_source(header_, device, request.entries, request.args->args, false));
  retry.log =
      "cpu emulation: __shared__ not poisoned per block (section type conflict)\n" + retry.log;
  return retry;
}

run_result cpu_runner::run(const run_request& request, const run_limits& limits) {
  run_result result;
  const cpu_build b = build(request);
  append_capped(result.log, b.log, limits.max_log_bytes);
  if (!b.ok) {
    result.failure = b.failure;
    return result;
  }
  wire::writer frame;  // one wire frame: length + payload
  frame.put_vector(
      cpu_protocol::encode_request(protocol_request(request, limits, options_.stack_bytes)));
  const std::vector<char> input = frame.take();

  const double trials = static_cast<double>(request.inputs.size());
  sandbox_options o;
  o.wall_timeout_s = options_.startup_allowance_s + limits.launch_timeout_s * trials +
                     static_cast<double>(input.size()) / 2e8;  // transfers at >= 200 MB/s
  // Also in sanitizer builds: the child is built without sanitizers (sparserl_sanitizer_exempt).
  // The per-trial limit proper: the child reports before its first trial and after each one, so
  // a trial that runs past the limit is killed then, not when every trial's allowance is spent.
  o.stall_timeout_s = limits.launch_timeout_s + trial_report_slack_s;
  o.address_space_bytes = limits.memory_bytes;
  o.file_size_bytes = 0;
  o.open_files = 16;
  o.processes = 0;
  o.isolate_network = options_.isolate_network;
  o.drop_privileges = options_.drop_privileges;
  o.max_stdout_bytes =
      static_cast<int64_t>(request.inputs.size()) * (output_length(request) * 4 + 64) +
      2 * limits.max_log_bytes + (1 << 20);
  o.max_stderr_bytes = limits.max_log_bytes;
  const sandbox_result sr = run_sandboxed({child_, b.object_path}, input, o);
  if (!sr.started) throw error("cpu runner: cannot start the emulator child: " + sr.failure);
  for (const std::string& n : sr.notes) append_capped(result.log, n, limits.max_log_bytes);

  bool partial = false;
  const std::string child_failure = collect_replies(sr, result, limits.max_log_bytes, partial);
  if (!sr.err.empty())
    append_capped(result.log, "emulator stderr:\n" + sr.err, limits.max_log_bytes);
  if (sr.stalled)
    result.failure = "timeout after " + seconds(limits.launch_timeout_s) + " s in trial " +
                     std::to_string(result.trials.size() + 1) + " (limit " +
                     seconds(limits.launch_timeout_s) + " s per trial)";
  else if (sr.timed_out)
    result.failure = "timeout after " + seconds(o.wall_timeout_s) + " s (limit " +
                     seconds(limits.launch_timeout_s) + " s per trial)";
  else if (!child_failure.empty())
    result.failure = child_failure;
  else if (sr.signal)
    result.failure = signal_failure(sr.signal);
  else if (sr.exit_code != 0)
    result.failure = "emulator child " + sr.describe(o.wall_timeout_s);
  else if (partial || result.trials.size() != request.inputs.size())
    result.failure = "emulator returned " + std::to_string(result.trials.size()) + " of " +
                     std::to_string(request.inputs.size()) + " trials";
  for (const trial_result& t : result.trials)
    if (result.failure.empty() && static_cast<int64_t>(t.output.size()) != output_length(request))
      result.failure = "emulator returned an output of the wrong length";
  result.ok = result.failure.empty();
  if (!result.ok) result.trials.clear();
  return result;
}

}  // namespace sparserl
