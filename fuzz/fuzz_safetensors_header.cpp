// libFuzzer target: safetensors_file::open (model/safetensors.h) on arbitrary bytes: the 8-byte
// header length, the JSON header and the data buffer. It must either give tensors that tile the
// buffer exactly, each view inside the mapping, or throw sparserl::error naming the file on one
// line. Anything else (crash, sanitizer report, other exception, a view outside the file) is a
// finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "memory_file.h"
#include "model/safetensors.h"
#include "sparse/error.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_safetensors_header: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparserl;
  const fuzz::memory_file file(data, size);
  safetensors_file st;
  try {
    st.open(file.path());
  } catch (const error& e) {
    const std::string what = e.what();
    if (what.find(file.path()) == std::string::npos || what.find('\n') != std::string::npos)
      finding("bad message: " + what);
    return 0;
  } catch (const std::exception& e) {
    finding(std::string("exception other than sparserl::error: ") + e.what());
  }
  if (size < 8) finding("a file shorter than the header length was accepted");
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | data[i];
  const uint64_t buffer = size - 8 - header;
  // The views must tile [buffer start, file end): their byte counts add up to the buffer, and
  // every byte of every view is readable (the sum touches them all; outside the map it faults).
  uint64_t covered = 0;
  unsigned checksum = 0;
  for (const std::string& name : st.names()) {
    const tensor_view& v = st.get(name);
    if (v.bytes != static_cast<uint64_t>(v.numel()) * dtype_size(v.dtype))
      finding("tensor " + name + ": bytes disagree with its shape");
    const auto* p = static_cast<const unsigned char*>(v.data);
    for (size_t i = 0; i < v.bytes; ++i) checksum += p[i];
    covered += v.bytes;
  }
  if (covered != buffer) finding("tensors do not cover the data buffer exactly");
  return static_cast<int>(checksum & 0);  // keeps the reads
}
