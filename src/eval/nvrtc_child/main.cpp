// sparserl-nvrtc-child MEMORY_BYTES CPU_SECONDS FLAG...: compiles the CUDA source on stdin with
// NVRTC under its own limits and writes its reply (eval/nvrtc_reply.h) to fd 3. Started only by
// eval/compiler.cpp, with fd 2 a capture file (LLVM reports "out of memory" there).
#include <nvrtc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "eval/nvrtc_reply.h"
#include "eval/wire.h"

namespace {

using child_status = sparserl::nvrtc_child_status;

struct child_reply {
  child_status status = child_status::nvrtc_failure;
  std::string message;  // NVRTC's result string
  std::string log;
  std::vector<char> cubin;
};

child_reply run_nvrtc(const std::string& source, const std::vector<std::string>& flags) {
  child_reply reply;
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = nvrtcCreateProgram(&prog, source.c_str(), "program.cu", 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) {
    reply.status =
        rc == NVRTC_ERROR_OUT_OF_MEMORY ? child_status::out_of_memory : child_status::nvrtc_failure;
    reply.message = nvrtcGetErrorString(rc);
    return reply;
  }
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());
  rc = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    reply.log.resize(log_size);
    if (nvrtcGetProgramLog(prog, reply.log.data()) != NVRTC_SUCCESS) reply.log.clear();
    while (!reply.log.empty() && reply.log.back() == '\0') reply.log.pop_back();
  }
  reply.message = nvrtcGetErrorString(rc);
  if (rc == NVRTC_SUCCESS) {
    size_t n = 0;
    if (nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
      reply.cubin.resize(n);
      if (nvrtcGetCUBIN(prog, reply.cubin.data()) == NVRTC_SUCCESS) reply.status = child_status::ok;
    }
    if (reply.status != child_status::ok) reply.message = "NVRTC produced no CUBIN";
  } else if (rc == NVRTC_ERROR_COMPILATION) {
    reply.status = child_status::source_error;
  } else if (rc == NVRTC_ERROR_OUT_OF_MEMORY) {
    reply.status = child_status::out_of_memory;
  }
  nvrtcDestroyProgram(&prog);
  return reply;
}

int64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// The limits: address space on top of what this process maps at start (NVRTC's library
// included); CPU time, so that a busy machine cannot fail a legitimate compile (SIGXCPU at the
// limit, SIGKILL a second later); no core dumps.
void set_limits(int64_t memory_bytes, int64_t cpu_seconds) {
  rlimit as{};
  as.rlim_cur = as.rlim_max = static_cast<rlim_t>(address_space_bytes() + memory_bytes);
  ::setrlimit(RLIMIT_AS, &as);
  rlimit core{};
  ::setrlimit(RLIMIT_CORE, &core);
  rlimit cpu{};
  cpu.rlim_cur = static_cast<rlim_t>(std::max<int64_t>(1, cpu_seconds));
  cpu.rlim_max = cpu.rlim_cur + 1;
  ::setrlimit(RLIMIT_CPU, &cpu);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string source(std::istreambuf_iterator<char>(std::cin), {});
  const std::vector<std::string> flags(argv + 3, argv + argc);
  set_limits(std::strtoll(argv[1], nullptr, 10), std::strtoll(argv[2], nullptr, 10));
  child_reply reply;
  try {
    reply = run_nvrtc(source, flags);
  } catch (const std::bad_alloc&) {
    reply.status = child_status::out_of_memory;
    reply.message = "std::bad_alloc";
  } catch (...) {
    reply.status = child_status::nvrtc_failure;
    reply.message = "exception in NVRTC";
  }
  try {
    sparserl::wire::writer w;
    w.put(static_cast<uint8_t>(reply.status));
    w.put_string(reply.message);
    w.put_string(reply.log);
    w.put_vector(reply.cubin);
    sparserl::wire::write_message(3, w.bytes());
  } catch (...) {
    return 4;
  }
  return 0;
}
