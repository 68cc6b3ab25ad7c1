#pragma once
// The CPU executor: runs a program's device source on a machine without a GPU, for correctness
// only (no timing). Per run:
//   1. eval/cpu_program_source.h turns the source into one C++ translation unit over the CUDA
//      emulation (eval/emu/cuda_emulation.h: one fiber per CUDA thread, blocks in sequence).
//   2. g++ builds it into a shared object, itself inside the sandbox (eval/sandbox.h) as nobody,
//      under a time limit; eval/elf_screen.h rejects objects that would run code when loaded.
//      Objects are cached by a hash of the full source (the source is kept beside the object and
//      compared on a hit, so a hash collision can only cost a rebuild).
//   3. sparserl-cpu-child (eval/emu/child_main.cpp) runs in the sandbox: it reads the arguments
//      from stdin (eval/cpu_protocol.h), lays every array out between guard pages, loads the
//      object, installs its seccomp allow-list, and for each trial poisons the output, runs every
//      entry point over its grid and writes the output and unchanged-flags back.
// Faults become failures: "out-of-bounds memory access (SIGSEGV): read at 16 bytes past the end
// of x ...", "deadlock: __syncthreads not reached by all threads of block (0,0,0) ...",
// "timeout after 3 s ...", "sandbox: forbidden system call openat". docs/security.md has the
// threat model.
// Thread-safe: runs share nothing but the cache directory.
#include <cstdint>
#include <string>
#include <vector>

#include "eval/runner.h"

namespace sparserl {

struct cpu_runner_options {
  std::string child_path;  // "": $SPARSERL_CPU_CHILD, else sparserl-cpu-child of this build tree
  std::string compiler;    // "": g++ (else c++) found on PATH
  std::string cache_dir;   // "": <temp dir>/sparserl-cpu-cache-<uid>
  std::string emulation_header;  // "": $SPARSERL_CUDA_EMULATION_HEADER, else the source tree's
  std::vector<std::string> compile_flags = {"-std=c++17", "-O1"};
  double compile_timeout_s = 60;
  int64_t compile_memory_bytes = int64_t{4} << 30;
  int64_t stack_bytes = 256 * 1024;  // per emulated CUDA thread (guard page below each)
  double startup_allowance_s = 2;    // added to the trials' time for loading and I/O
  bool drop_privileges = true;       // sandbox: run as nobody when root
  bool isolate_network = true;       // sandbox: new network namespace when permitted
};

// What building one program gave (exposed for tests and tools).
struct cpu_build {
  bool ok = false;
  std::string failure;  // "emulator compile error: program.cu:3:5: error: ...", "rejected: ..."
  std::string log;      // g++'s messages and sandbox notes
  std::string object_path;
  bool cached = false;  // served from the cache, no compiler run
};

class cpu_runner : public program_runner {
 public:
  // Throws sparserl::error when the child, the compiler or the emulation header cannot be found,
  // or the cache directory is unusable (not ours, or writable by others).
  explicit cpu_runner(cpu_runner_options options = {});

  const char* name() const override { return "cpu"; }
  // Bad programs give a failed run_result; a malformed request (no args, geometry and entries
  // that disagree, inputs of the wrong length) or a broken installation throws sparserl::error.
  run_result run(const run_request& request, const run_limits& limits) override;

  cpu_build build(const run_request& request);
  const std::string& cache_dir() const { return cache_dir_; }

 private:
  cpu_build build_source(const std::string& source);
  bool cached_object(const std::string& source, const std::string& key, std::string& path) const;
  std::string publish(const std::string& key, const std::string& source,
                      const std::vector<char>& object) const;

  cpu_runner_options options_;
  std::string compiler_, child_, header_, cache_dir_;
  std::string build_identity_;  // compiler, flags and child: part of every cache key
};

}  // namespace sparserl
