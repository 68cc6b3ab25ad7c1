// sparserl-gpu-worker: one sandboxed process per GPU slot of eval/gpu_runner. It sends a hello
// (the device, or why it could not be opened), then answers framed requests (eval/gpu_protocol.h)
// on stdin/stdout until EOF. After a sticky CUDA error it replies and exits, so the parent starts
// a fresh process with a fresh context.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "eval/gpu_protocol.h"
#include "eval/gpu_worker/baseline.h"
#include "eval/gpu_worker/data_cache.h"
#include "eval/gpu_worker/deadline_wait.h"
#include "eval/gpu_worker/device_context.h"
#include "eval/gpu_worker/run_program.h"

namespace sparserl::gpu_worker {
namespace {

constexpr int exit_context_lost = 3;
constexpr int exit_timeout = 4;

// What the timeout handler needs to answer the request in flight (one at a time).
int protocol_out = -1;
gpu_protocol::message request_in_flight = gpu_protocol::message::hello;

struct handled {
  std::vector<char> reply;
  bool fatal = false;
};

handled handle(device_context& device, data_cache& cache, gpu_protocol::message kind,
               wire::reader& r) {
  using gpu_protocol::message;
  switch (kind) {
    case message::load_data: {
      cache.load(gpu_protocol::decode_load(r));
      return {gpu_protocol::encode_status_reply(kind, {}), false};
    }
    case message::run_program: {
      const gpu_protocol::run_program_reply reply =
          run_program(device, cache, gpu_protocol::decode_run(r));
      return {gpu_protocol::encode_run_reply(reply), reply.result.fatal};
    }
    case message::baseline: {
      const auto algorithms = run_baseline(device, gpu_protocol::decode_baseline(r));
      return {gpu_protocol::encode_baseline_reply({}, algorithms), false};
    }
    case message::copy_bandwidth: {
      const auto request = gpu_protocol::decode_copy_bandwidth(r);
      return {gpu_protocol::encode_bandwidth_reply({}, request.bytes,
                                                   run_copy_bandwidth(device, request)),
              false};
    }
    case message::hello:
      break;
  }
  throw error("gpu worker: unexpected request kind");
}

// A failure in the full (empty) reply form of the request's kind, decoded like any other reply.
std::vector<char> failure_reply(gpu_protocol::message kind, const gpu_protocol::status& s) {
  using gpu_protocol::message;
  switch (kind) {
    case message::run_program: {
      gpu_protocol::run_program_reply reply;
      reply.result = s;
      return gpu_protocol::encode_run_reply(reply);
    }
    case message::baseline:
      return gpu_protocol::encode_baseline_reply(s, {});
    case message::copy_bandwidth:
      return gpu_protocol::encode_bandwidth_reply(s, 0, {});
    default:
      return gpu_protocol::encode_status_reply(kind, s);
  }
}

std::vector<char> failure_reply(gpu_protocol::message kind, const gpu_protocol::status& s);

// A launch ran past its limit: answer with a fatal timeout and exit without unwinding (the
// destructors would synchronise with the kernel that is still running). The parent replaces us.
[[noreturn]] void reply_timeout_and_exit(const std::string& why) {
  wire::write_message(protocol_out, failure_reply(request_in_flight, {false, why, true}));
  std::fflush(nullptr);
  std::_Exit(exit_timeout);
}

int parse_device(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--device") == 0) return std::atoi(argv[i + 1]);
  return 0;
}

int serve(int argc, char** argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the trainer, even inside a hung kernel
  // The protocol gets a private copy of stdout; fd 1 then points at stderr, so device printf and
  // any stray output land in the parent's log instead of corrupting the frames.
  const int proto_out = ::dup(1);
  const int proto_in = 0;
  if (proto_out < 0 || ::dup2(2, 1) < 0) return 1;
  protocol_out = proto_out;
  set_timeout_handler(reply_timeout_and_exit);

  std::unique_ptr<device_context> device;
  device_info hello;
  try {
    device = std::make_unique<device_context>(parse_device(argc, argv));
    hello = device->info();
  } catch (const std::exception& e) {
    hello.ok = false;
    hello.error = e.what();
  }
  wire::write_message(proto_out, gpu_protocol::encode_hello(hello));
  if (!hello.ok) return 1;

  data_cache cache;
  std::vector<char> message;
  while (wire::read_message(proto_in, message)) {
    wire::reader r(message);
    const gpu_protocol::message kind = gpu_protocol::read_kind(r);
    request_in_flight = kind;
    handled h;
    try {
      h = handle(*device, cache, kind, r);
    } catch (const cuda_failure& e) {
      h.fatal = context_lost();
      h.reply = failure_reply(kind, {false, e.what(), h.fatal});
    } catch (const std::exception& e) {  // bad request, out of host memory, ...
      h.reply = failure_reply(kind, {false, e.what(), false});
    }
    wire::write_message(proto_out, h.reply);
    if (h.fatal) {
      std::fflush(nullptr);
      std::_Exit(exit_context_lost);  // skip destructors: they would call into a dead context
    }
  }
  return 0;
}

}  // namespace
}  // namespace sparserl::gpu_worker

int main(int argc, char** argv) {
  try {
    return sparserl::gpu_worker::serve(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sparserl-gpu-worker: %s\n", e.what());
    return 1;
  }
}
