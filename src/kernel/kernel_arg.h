#pragma once
// One argument of a kernel entry point as the harness passes it: a scalar, a read-only format
// array, the dense input / output the runner supplies per trial, or a scratch buffer the runner
// allocates. The runners marshal these generically (by kind), so a format adds arrays without
// touching them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sparserl {

// The values are on the wire (eval/gpu_protocol, eval/cpu_protocol): append, never renumber.
enum class arg_kind {
  i32,        // int scalar
  i32_array,  // const int* (device, read-only)
  f32_array,  // const float* (device, read-only)
  input,      // const float* x (SpMV, cols) or B (SpMM, cols x k row-major): fresh per trial
  output,     // float* y (rows) or C (rows x k row-major): poisoned before every run
  u16_array,  // const unsigned short* (device, read-only): compressed column indices
  // float* work (device, writable), as many floats as the input (SpMV: cols; SpMM: cols x k),
  // allocated by the runner and poisoned (NaN) before every run: the program's own workspace
  // (RCSR gathers x into it). Not a format array: nothing is uploaded into it and it is not
  // checked after a run; the converter puts a placeholder of this kind in its slot.
  scratch,
};

struct kernel_arg {
  arg_kind kind = arg_kind::i32;
  std::string name;              // as in the signature, e.g. "row_ptr"
  int32_t scalar = 0;            // kind == i32
  std::vector<int32_t> ints;     // kind == i32_array
  std::vector<float> floats;     // kind == f32_array
  std::vector<uint16_t> shorts;  // kind == u16_array

  // Whether this is a format array the harness uploads (and checks unchanged after each run).
  bool is_array() const {
    return kind == arg_kind::i32_array || kind == arg_kind::f32_array ||
           kind == arg_kind::u16_array;
  }
  // The array's host bytes (nullptr / 0 for scalars, input, output and scratch).
  const void* array_data() const {
    switch (kind) {
      case arg_kind::i32_array:
        return ints.data();
      case arg_kind::f32_array:
        return floats.data();
      case arg_kind::u16_array:
        return shorts.data();
      default:
        return nullptr;
    }
  }
  size_t array_bytes() const {
    return ints.size() * sizeof(int32_t) + floats.size() * sizeof(float) +
           shorts.size() * sizeof(uint16_t);
  }
};

}  // namespace sparserl
