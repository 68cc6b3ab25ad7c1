#pragma once
// What sparserl-nvrtc-child (eval/nvrtc_child/main.cpp) writes to fd 3 and eval/compiler.cpp
// reads: one wire frame of the status byte, NVRTC's result string, the log and the CUBIN.
#include <cstdint>

namespace sparserl {

enum class nvrtc_child_status : uint8_t { ok, source_error, out_of_memory, nvrtc_failure };

}  // namespace sparserl
