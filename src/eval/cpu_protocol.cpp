#include "eval/cpu_protocol.h"

#include "eval/wire.h"
#include "sparse/error.h"

namespace sparserl::cpu_protocol {

std::vector<char> encode_request(const request& r) {
  wire::writer w;
  w.put<uint32_t>(version);
  w.put_vector(r.launches);
  w.put<uint64_t>(r.args.size());
  for (const arg& a : r.args) {
    w.put<uint8_t>(static_cast<uint8_t>(a.type));
    w.put_string(a.name);
    w.put<int32_t>(a.scalar);
    w.put_vector(a.ints);
    w.put_vector(a.floats);
    w.put_vector(a.shorts);
  }
  w.put<uint64_t>(r.output_length);
  w.put<uint64_t>(r.inputs.size());
  for (const std::vector<float>& x : r.inputs) w.put_vector(x);
  w.put<uint32_t>(r.poison_bits);
  w.put<uint64_t>(r.stack_bytes);
  w.put<uint64_t>(r.max_log_bytes);
  return w.take();
}

request decode_request(const std::vector<char>& payload) {
  wire::reader rd(payload);
  if (rd.get<uint32_t>() != version) throw error("cpu protocol: request version mismatch");
  request r;
  r.launches = rd.get_vector<launch>();
  const uint64_t n_args = rd.get<uint64_t>();
  if (n_args > payload.size()) throw error("cpu protocol: argument count exceeds the message");
  for (uint64_t i = 0; i < n_args; ++i) {
    arg a;
    const uint8_t type = rd.get<uint8_t>();
    if (type > static_cast<uint8_t>(arg_type::scratch))
      throw error("cpu protocol: unknown argument type " + std::to_string(type));
    a.type = static_cast<arg_type>(type);
    a.name = rd.get_string();
    a.scalar = rd.get<int32_t>();
    a.ints = rd.get_vector<int32_t>();
    a.floats = rd.get_vector<float>();
    a.shorts = rd.get_vector<uint16_t>();
    r.args.push_back(std::move(a));
  }
  r.output_length = rd.get<uint64_t>();
  const uint64_t n_inputs = rd.get<uint64_t>();
  if (n_inputs > payload.size()) throw error("cpu protocol: trial count exceeds the message");
  for (uint64_t i = 0; i < n_inputs; ++i) r.inputs.push_back(rd.get_vector<float>());
  r.poison_bits = rd.get<uint32_t>();
  r.stack_bytes = rd.get<uint64_t>();
  r.max_log_bytes = rd.get<uint64_t>();
  if (!rd.done()) throw error("cpu protocol: trailing bytes after the request");
  return r;
}

frame_template trial_template(uint64_t output_length) {
  frame_template t;
  wire::writer w;
  w.put<uint8_t>(static_cast<uint8_t>(frame_kind::trial));
  t.flags_offset = w.bytes().size();
  w.put<uint8_t>(1);
  w.put<uint8_t>(1);
  w.put_vector(std::vector<float>(output_length));
  t.bytes = w.take();
  t.capacity = output_length;
  t.data_offset = t.bytes.size() - output_length * sizeof(float);  // the vector's data is last
  return t;
}

frame_template text_template(frame_kind kind, uint64_t capacity) {
  frame_template t;
  wire::writer w;
  w.put<uint8_t>(static_cast<uint8_t>(kind));
  t.length_offset = w.bytes().size();
  w.put<uint64_t>(0);
  w.put_vector(std::vector<char>(capacity));
  t.bytes = w.take();
  t.capacity = capacity;
  t.data_offset = t.bytes.size() - capacity;
  return t;
}

std::vector<char> text_frame(frame_kind kind, const std::string& text) {
  wire::writer w;
  w.put<uint8_t>(static_cast<uint8_t>(kind));
  w.put<uint64_t>(text.size());
  w.put_vector(std::vector<char>(text.begin(), text.end()));
  return w.take();
}

reply decode_reply(const std::vector<char>& payload) {
  wire::reader rd(payload);
  reply r;
  const uint8_t kind = rd.get<uint8_t>();
  if (kind == static_cast<uint8_t>(frame_kind::trial)) {
    r.kind = frame_kind::trial;
    r.input_unchanged = rd.get<uint8_t>() != 0;
    r.format_unchanged = rd.get<uint8_t>() != 0;
    r.output = rd.get_vector<float>();
  } else if (kind >= static_cast<uint8_t>(frame_kind::note) &&
             kind <= static_cast<uint8_t>(frame_kind::started)) {
    r.kind = static_cast<frame_kind>(kind);
    const uint64_t used = rd.get<uint64_t>();
    const std::vector<char> chars = rd.get_vector<char>();
    if (used > chars.size()) throw error("cpu protocol: text frame claims more than it holds");
    r.text.assign(chars.data(), used);
  } else {
    throw error("cpu protocol: unknown reply kind " + std::to_string(kind));
  }
  if (!rd.done()) throw error("cpu protocol: trailing bytes in a reply");
  return r;
}

std::vector<std::vector<char>> split_frames(const std::vector<char>& stream, bool* partial) {
  // A frame is a uint64 length and the payload: exactly what put_vector<char> writes.
  wire::reader rd(stream);
  std::vector<std::vector<char>> frames;
  if (partial) *partial = false;
  while (!rd.done()) {
    try {
      frames.push_back(rd.get_vector<char>());
    } catch (const error&) {
      if (!partial) throw;
      *partial = true;
      break;
    }
  }
  return frames;
}

}  // namespace sparserl::cpu_protocol
