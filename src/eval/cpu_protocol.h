#pragma once
// The messages between cpu_runner (parent) and sparserl-cpu-child (the sandboxed emulator),
// framed and encoded by eval/wire.h. The parent writes one request frame to the child's stdin;
// the child answers on stdout with a stream of frames:
//   note     (before the sandbox closes) something the runner should log, e.g. "no seccomp"
//   trial    one per finished trial: input/format unchanged flags, the output
//   log      the program's printf output, once, at the end or before a failure
//   failure  why the run stopped (deadlock, fault, bad request); the child exits after it
// Under seccomp strict mode the child can only read and write, so its reply frames are built
// (allocated and encoded) beforehand as templates and only filled in afterwards.
#include <cstdint>
#include <string>
#include <vector>

namespace sparserl::cpu_protocol {

constexpr uint32_t version = 3;  // 2: u16_array arguments; 3: scratch buffers

// Mirrors kernel/abi.h's arg_kind (the child does not link the kernel library).
enum class arg_type : uint8_t {
  i32 = 0,
  i32_array = 1,
  f32_array = 2,
  input = 3,
  output = 4,
  u16_array = 5,
  scratch = 6  // writable, input-sized, poisoned before every trial; no data travels
};

struct launch {
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1, block_x = 1, shared_bytes = 0;
};

struct arg {
  arg_type type = arg_type::i32;
  std::string name;
  int32_t scalar = 0;
  std::vector<int32_t> ints;
  std::vector<float> floats;
  std::vector<uint16_t> shorts;
};

struct request {
  std::vector<launch> launches;  // one per entry point, in order: symbol sparserl_emu_entry_<i>
  std::vector<arg> args;
  uint64_t output_length = 0;              // floats in the output buffer
  std::vector<std::vector<float>> inputs;  // one per trial, all of one length
  uint32_t poison_bits = 0;
  uint64_t stack_bytes = 64 * 1024;  // per device thread
  uint64_t max_log_bytes = 64 * 1024;
};

std::vector<char> encode_request(const request& r);
request decode_request(const std::vector<char>& payload);  // throws sparserl::error

// started: sent (empty) just before the first trial, so the runner can time each trial from it.
enum class frame_kind : uint8_t { note = 1, trial = 2, log = 3, failure = 4, started = 5 };

// A reply frame encoded ahead of time: `bytes` is the whole payload; fill the fields at the
// offsets, then send it with wire::write_message.
struct frame_template {
  std::vector<char> bytes;
  size_t flags_offset = 0;   // trial: two uint8 flags (input unchanged, format unchanged)
  size_t length_offset = 0;  // text: uint64 bytes used of the capacity
  size_t data_offset = 0;    // trial: the output floats; text: the characters
  size_t capacity = 0;       // trial: floats; text: characters
};
frame_template trial_template(uint64_t output_length);
frame_template text_template(frame_kind kind, uint64_t capacity);
std::vector<char> text_frame(frame_kind kind, const std::string& text);

struct reply {
  frame_kind kind = frame_kind::note;
  std::string text;  // note, log, failure
  bool input_unchanged = true, format_unchanged = true;
  std::vector<float> output;  // trial
};
reply decode_reply(const std::vector<char>& payload);  // throws sparserl::error

// Splits a captured stdout stream into frame payloads (the inverse of repeated
// wire::write_message). A partial last frame (the child died mid-write) is dropped and sets
// *partial; without `partial` it throws sparserl::error.
std::vector<std::vector<char>> split_frames(const std::vector<char>& stream,
                                            bool* partial = nullptr);

}  // namespace sparserl::cpu_protocol
