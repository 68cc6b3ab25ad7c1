// sparserl-cpu-child: runs one emulated program for the CPU runner (eval/cpu_runner.h) inside the
// sandbox the runner started it in. argv[1] is the program's shared object (built by the runner
// from eval/emu/cuda_emulation.h + device source + entry shims); stdin carries one
// cpu_protocol::request; stdout receives the reply frames.
//
// Everything that needs a system call happens first: reading the request, mapping the guarded
// buffers and fiber stacks, loading the program, encoding the reply templates, installing the
// fault handlers. Then the child installs its seccomp allow-list (eval/syscall_filter.h: write,
// read, exit, sigreturn) and only after that does any device code run, so the program
// cannot open files, start processes or reach the network whatever it contains; a call outside
// the list fails the run as "sandbox: forbidden system call <name>".
#include <dlfcn.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "eval/cpu_protocol.h"
#include "eval/emu/block_scheduler.h"
#include "eval/emu/child_report.h"
#include "eval/emu/guarded_memory.h"
#include "eval/syscall_filter.h"
#include "eval/wire.h"
#include "sparse/error.h"

namespace sparserl::emu {
namespace {

using cpu_protocol::arg_type;

constexpr uint32_t max_block_threads = 1024;

size_t round16(size_t v) { return (v + 15) / 16 * 16; }

void on_fault(int sig, siginfo_t* info, void* context) {
  char what[512];
  text_buffer t(what, sizeof(what));
  if (sig == SIGSEGV || sig == SIGBUS) {
    t.add("out-of-bounds memory access (").add(sig == SIGSEGV ? "SIGSEGV" : "SIGBUS").add("): ");
#if defined(__x86_64__)
    const auto* uc = static_cast<const ucontext_t*>(context);
    t.add((uc->uc_mcontext.gregs[REG_ERR] & 2) ? "write at " : "read at ");
#else
    (void)context;
    t.add("access at ");
#endif
    char where[256];
    describe_address(reinterpret_cast<uintptr_t>(info->si_addr), where, sizeof(where));
    t.add(where);
  } else if (sig == SIGFPE) {
    t.add("arithmetic exception (SIGFPE)");
    if (info->si_code == FPE_INTDIV) t.add(": integer division by zero");
  } else {
    t.add("illegal instruction (SIGILL)");
  }
  t.add(" in block (").add(uint64_t{blockIdx.x}).add(",").add(uint64_t{blockIdx.y}).add(",");
  t.add(uint64_t{blockIdx.z}).add(") thread ").add(uint64_t{threadIdx.x});
  child_reporter.fail_from_signal(what);
  // SA_RESETHAND restored the default action: returning re-executes the faulting instruction,
  // which now ends the process with this signal, as the runner expects.
}

void install_fault_handlers(std::vector<char>& alt_stack) {
  stack_t ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  if (::sigaltstack(&ss, nullptr) != 0)
    throw error(std::string("emulator: sigaltstack failed: ") + std::strerror(errno));
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    if (::sigaction(sig, &sa, nullptr) != 0)
      throw error(std::string("emulator: sigaction failed: ") + std::strerror(errno));
}

class emulated_run {
 public:
  emulated_run(cpu_protocol::request request, const char* program_path, int protocol_fd);
  [[noreturn]] void execute();

 private:
  void validate() const;
  void lay_out_arguments();
  void load_program(const char* path);
  void enter_sandbox();
  void run_launch(size_t e);
  bool restore_format();  // false when the program changed a format array

  cpu_protocol::request req_;
  std::vector<guarded_buffer> buffers_;  // one per argument (empty for scalars)
  std::vector<int32_t> scalars_;
  std::vector<void*> argv_;
  guarded_buffer* input_ = nullptr;
  guarded_buffer* output_ = nullptr;
  std::vector<guarded_buffer*> scratch_;  // the program's workspaces, poisoned every trial
  guarded_buffer dynamic_shared_;
  std::unique_ptr<block_scheduler> scheduler_;
  std::vector<entry_function> entries_;
  unsigned char* shared_begin_ = nullptr;
  unsigned char* shared_end_ = nullptr;
  std::vector<char> alt_stack_ = std::vector<char>(256 * 1024);
};

emulated_run::emulated_run(cpu_protocol::request request, const char* program_path, int protocol_fd)
    : req_(std::move(request)) {
  validate();
  child_reporter.prepare(protocol_fd, req_.output_length, req_.max_log_bytes);
  lay_out_arguments();
  uint32_t max_threads = 1;
  size_t max_shared = 0;
  for (const cpu_protocol::launch& l : req_.launches) {
    max_threads = std::max(max_threads, l.block_x);
    max_shared = std::max<size_t>(max_shared, l.shared_bytes);
  }
  scheduler_ = std::make_unique<block_scheduler>(max_threads, req_.stack_bytes);
  active_scheduler = scheduler_.get();
  dynamic_shared_ = guarded_buffer(round16(max_shared), "dynamic shared memory");
  load_program(program_path);
  install_fault_handlers(alt_stack_);
}

void emulated_run::validate() const {
  if (req_.launches.empty()) throw error("request has no launches");
  for (const cpu_protocol::launch& l : req_.launches) {
    if (l.block_x < 1 || l.block_x > max_block_threads)
      throw error("block of " + std::to_string(l.block_x) + " threads is outside 1..1024");
  }
  if (req_.inputs.empty()) throw error("request has no trials");
  int inputs = 0, outputs = 0;
  for (const cpu_protocol::arg& a : req_.args) {
    inputs += a.type == arg_type::input;
    outputs += a.type == arg_type::output;
  }
  if (inputs != 1 || outputs != 1)
    throw error("request needs exactly one input and one output argument");
  for (const std::vector<float>& x : req_.inputs)
    if (x.size() != req_.inputs[0].size()) throw error("trial inputs differ in length");
  if (req_.stack_bytes < 16 * 1024) throw error("device thread stacks below 16 KiB");
}

void emulated_run::lay_out_arguments() {
  const size_t n = req_.args.size();
  buffers_.resize(n);
  scalars_.assign(n, 0);
  argv_.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const cpu_protocol::arg& a = req_.args[i];
    switch (a.type) {
      case arg_type::i32:
        scalars_[i] = a.scalar;
        argv_[i] = &scalars_[i];
        continue;
      case arg_type::i32_array:
        buffers_[i] = guarded_buffer(a.ints.size() * sizeof(int32_t), a.name);
        if (!a.ints.empty()) std::memcpy(buffers_[i].data(), a.ints.data(), buffers_[i].size());
        break;
      case arg_type::f32_array:
        buffers_[i] = guarded_buffer(a.floats.size() * sizeof(float), a.name);
        if (!a.floats.empty()) std::memcpy(buffers_[i].data(), a.floats.data(), buffers_[i].size());
        break;
      case arg_type::u16_array:
        buffers_[i] = guarded_buffer(a.shorts.size() * sizeof(uint16_t), a.name);
        if (!a.shorts.empty()) std::memcpy(buffers_[i].data(), a.shorts.data(), buffers_[i].size());
        break;
      case arg_type::input:
        buffers_[i] = guarded_buffer(req_.inputs[0].size() * sizeof(float), a.name);
        input_ = &buffers_[i];
        break;
      case arg_type::output:
        buffers_[i] = guarded_buffer(req_.output_length * sizeof(float), a.name);
        output_ = &buffers_[i];
        break;
      case arg_type::scratch:  // as large as the input
        buffers_[i] = guarded_buffer(req_.inputs[0].size() * sizeof(float), a.name);
        scratch_.push_back(&buffers_[i]);
        break;
    }
    argv_[i] = buffers_[i].data();
  }
}

void emulated_run::load_program(const char* path) {
  // RTLD_LOCAL: the program's symbols never stand in for this executable's or libc's.
  void* handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw error(std::string("cannot load the emulated program: ") + ::dlerror());
  for (size_t e = 0; e < req_.launches.size(); ++e) {
    const std::string name = "sparserl_emu_entry_" + std::to_string(e);
    void* f = ::dlsym(handle, name.c_str());
    if (!f) throw error("the emulated program lacks " + name);
    entries_.push_back(reinterpret_cast<entry_function>(f));
  }
  using section_function = void (*)(unsigned char**, unsigned char**);
  if (void* f = ::dlsym(handle, "sparserl_emu_shared_section"))
    reinterpret_cast<section_function>(f)(&shared_begin_, &shared_end_);
}

// The SIGSYS handler's report: the failure frame, as a fault's (write and exit only).
void report_forbidden_call(const char* verdict) { child_reporter.fail_and_exit(verdict); }

void emulated_run::enter_sandbox() {
  ::close(0);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Sanitizer runtimes map memory, read /proc and spawn symbolizers while reporting: under the
  // allow-list a report would die as a forbidden call. (scripts/sanitize.sh builds this child
  // without sanitizers, sparserl_sanitizer_exempt, so there the filter is on.)
  child_reporter.note("seccomp not entered: sanitizer runtimes need system calls");
#else
  // What the emulation needs once set up: write (reply frames, stderr) and exit (the reporter ends
  // the child with it), and read, as seccomp strict mode allowed. Not exit_group: device code
  // calling exit() is a forbidden call, not a clean-looking end.
  const std::string failure =
      install_syscall_filter({"read", "write", "exit"}, report_forbidden_call);
  if (!failure.empty())
    child_reporter.note("seccomp filter not installed (" + failure +
                        "): the program ran without a system call filter");
#endif
}

void emulated_run::run_launch(size_t e) {
  const cpu_protocol::launch& l = req_.launches[e];
  gridDim = dim3(l.grid_x, l.grid_y, l.grid_z);
  const dim3 block_dim(l.block_x);
  const size_t dyn = round16(l.shared_bytes);
  sparserl_emu_dynamic_shared = dynamic_shared_.end() - dyn;  // ends at the guard
  for (uint32_t z = 0; z < l.grid_z; ++z) {
    for (uint32_t y = 0; y < l.grid_y; ++y) {
      for (uint32_t x = 0; x < l.grid_x; ++x) {
        // Poisoned per block: shared memory a block reads before writing shows up as NaN.
        if (shared_end_ > shared_begin_)
          std::memset(shared_begin_, 0xff, static_cast<size_t>(shared_end_ - shared_begin_));
        if (dyn) std::memset(sparserl_emu_dynamic_shared, 0xff, dyn);
        const char* failure =
            scheduler_->run_block(entries_[e], argv_.data(), uint3{x, y, z}, block_dim);
        if (failure) child_reporter.fail_and_exit(failure);
      }
    }
  }
}

bool emulated_run::restore_format() {
  bool unchanged = true;
  for (size_t i = 0; i < req_.args.size(); ++i) {
    const cpu_protocol::arg& a = req_.args[i];
    const void* pristine =
        a.type == arg_type::i32_array   ? static_cast<const void*>(a.ints.data())
        : a.type == arg_type::f32_array ? static_cast<const void*>(a.floats.data())
        : a.type == arg_type::u16_array ? static_cast<const void*>(a.shorts.data())
                                        : nullptr;
    if (!pristine || buffers_[i].size() == 0) continue;
    if (std::memcmp(buffers_[i].data(), pristine, buffers_[i].size()) != 0) {
      unchanged = false;  // restored, so that every trial starts from the same arrays
      std::memcpy(buffers_[i].data(), pristine, buffers_[i].size());
    }
  }
  return unchanged;
}

void emulated_run::execute() {
  enter_sandbox();
  child_reporter.started();
  const size_t in_bytes = input_->size();
  for (const std::vector<float>& x : req_.inputs) {
    if (in_bytes) std::memcpy(input_->data(), x.data(), in_bytes);
    auto* out = reinterpret_cast<uint32_t*>(output_->data());
    for (uint64_t i = 0; i < req_.output_length; ++i) out[i] = req_.poison_bits;
    // Scratch holds garbage at entry, as on the GPU: a program that reads it before writing it
    // gets NaN, not what an earlier trial left there.
    for (guarded_buffer* w : scratch_) {
      auto* words = reinterpret_cast<uint32_t*>(w->data());
      for (size_t i = 0; i < w->size() / sizeof(uint32_t); ++i) words[i] = req_.poison_bits;
    }
    for (size_t e = 0; e < entries_.size(); ++e) run_launch(e);
    const bool input_unchanged =
        in_bytes == 0 || std::memcmp(input_->data(), x.data(), in_bytes) == 0;
    const bool format_unchanged = restore_format();
    child_reporter.trial(reinterpret_cast<const float*>(output_->data()), input_unchanged,
                         format_unchanged);
  }
  child_reporter.finish();
}

}  // namespace
}  // namespace sparserl::emu

int main(int argc, char** argv) {
  using namespace sparserl;
  // The protocol moves off fd 1, and fd 1 becomes stderr: a stray write to stdout by device code
  // lands in the runner's log instead of corrupting the reply stream.
  const int protocol_fd = ::dup(1);
  if (protocol_fd < 0 || ::dup2(2, 1) < 0) return 2;
  try {
    if (argc != 2) throw error("usage: sparserl-cpu-child PROGRAM.so < request");
    std::vector<char> payload;
    if (!wire::read_message(0, payload)) throw error("no request on stdin");
    emu::emulated_run run(cpu_protocol::decode_request(payload), argv[1], protocol_fd);
    std::vector<char>().swap(payload);
    run.execute();
  } catch (const std::exception& e) {
    try {
      wire::write_message(protocol_fd,
                          cpu_protocol::text_frame(cpu_protocol::frame_kind::failure,
                                                   std::string("emulator: ") + e.what()));
    } catch (...) {
    }
    ::_exit(2);
  }
}
