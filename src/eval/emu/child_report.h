#pragma once
// The child's reply channel to the CPU runner (eval/cpu_protocol.h). After prepare(), sending
// needs only write(2): the frames are templates allocated beforehand, which is what seccomp
// strict mode (read, write, exit, sigreturn) allows.
#include <cstddef>
#include <cstdint>
#include <string>

#include "eval/cpu_protocol.h"

namespace sparserl::emu {

class reporter {
 public:
  // Allocates the frame templates; `fd` is the protocol channel.
  void prepare(int fd, uint64_t output_length, uint64_t log_capacity);
  void note(const std::string& text);  // before the sandbox only (allocates)

  void started();  // the trials begin: the runner's per-trial deadline starts now
  void trial(const float* output, bool input_unchanged, bool format_unchanged);
  void append_log(const char* text, size_t n);
  [[noreturn]] void fail_and_exit(const char* message);
  // For signal handlers: sends the log and the failure, and returns (async-signal-safe).
  void fail_from_signal(const char* message);
  [[noreturn]] void finish();  // sends the log, exits 0

 private:
  void send(const cpu_protocol::frame_template& t);
  int fd_ = -1;
  cpu_protocol::frame_template trial_, log_, failure_, started_;
  uint64_t log_used_ = 0;
  bool failed_ = false;
};

// Never destroyed: device code that calls exit() runs the static destructors before its
// exit_group is trapped, and the SIGSYS handler still sends its failure through this.
extern reporter& child_reporter;

// Ends the process with the exit(2) system call, the one exit seccomp strict mode permits
// (glibc's _exit uses exit_group).
[[noreturn]] void exit_thread_only(int code);

}  // namespace sparserl::emu
