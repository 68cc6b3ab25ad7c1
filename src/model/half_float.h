#pragma once
// bfloat16 / IEEE half <-> float32 bit conversions for checkpoint I/O (no torch needed). Narrowing
// rounds to nearest, ties to even, as torch and numpy do, so a round trip through either matches.
#include <cstddef>
#include <cstdint>

namespace sparserl {

float bf16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float value);
float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);

// Whole-buffer forms, for converting a tensor's elements in one call.
void bf16_to_f32(const uint16_t* in, float* out, size_t count);
void f32_to_bf16(const float* in, uint16_t* out, size_t count);
void f16_to_f32(const uint16_t* in, float* out, size_t count);
void f32_to_f16(const float* in, uint16_t* out, size_t count);

}  // namespace sparserl
