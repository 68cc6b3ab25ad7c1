#include "eval/emu/child_report.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "eval/wire.h"

namespace sparserl::emu {

reporter& child_reporter = *new reporter;  // never destroyed (see the header)

namespace {

// Whole-buffer write with only write(2): no allocation, no exception (signal handlers use it).
void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the runner is gone; nothing left to tell
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void put_u64(char* at, uint64_t v) { std::memcpy(at, &v, sizeof(v)); }

}  // namespace

void exit_thread_only(int code) {
  for (;;) ::syscall(SYS_exit, code);
}

void reporter::prepare(int fd, uint64_t output_length, uint64_t log_capacity) {
  fd_ = fd;
  trial_ = cpu_protocol::trial_template(output_length);
  log_ = cpu_protocol::text_template(cpu_protocol::frame_kind::log, log_capacity);
  failure_ = cpu_protocol::text_template(cpu_protocol::frame_kind::failure, 1024);
  started_ = cpu_protocol::text_template(cpu_protocol::frame_kind::started, 0);
}

void reporter::started() { send(started_); }

void reporter::note(const std::string& text) {
  wire::write_message(fd_, cpu_protocol::text_frame(cpu_protocol::frame_kind::note, text));
}

void reporter::send(const cpu_protocol::frame_template& t) {
  // wire::write_message's framing, done by hand so that no exception can be thrown here.
  char header[sizeof(uint64_t)];
  put_u64(header, t.bytes.size());
  write_all(fd_, header, sizeof(header));
  write_all(fd_, t.bytes.data(), t.bytes.size());
}

void reporter::trial(const float* output, bool input_unchanged, bool format_unchanged) {
  char* b = trial_.bytes.data();
  b[trial_.flags_offset] = input_unchanged ? 1 : 0;
  b[trial_.flags_offset + 1] = format_unchanged ? 1 : 0;
  if (trial_.capacity) std::memcpy(b + trial_.data_offset, output, trial_.capacity * sizeof(float));
  send(trial_);
}

void reporter::append_log(const char* text, size_t n) {
  const size_t room = log_.capacity - log_used_;
  const size_t take = n < room ? n : room;
  std::memcpy(log_.bytes.data() + log_.data_offset + log_used_, text, take);
  log_used_ += take;
}

void reporter::fail_from_signal(const char* message) {
  if (failed_ || fd_ < 0) return;
  failed_ = true;
  if (log_used_) {
    put_u64(log_.bytes.data() + log_.length_offset, log_used_);
    send(log_);
  }
  const size_t n = ::strnlen(message, failure_.capacity);
  std::memcpy(failure_.bytes.data() + failure_.data_offset, message, n);
  put_u64(failure_.bytes.data() + failure_.length_offset, n);
  send(failure_);
}

void reporter::fail_and_exit(const char* message) {
  fail_from_signal(message);
  exit_thread_only(3);
}

void reporter::finish() {
  if (log_used_) {
    put_u64(log_.bytes.data() + log_.length_offset, log_used_);
    send(log_);
  }
  exit_thread_only(0);
}

}  // namespace sparserl::emu
