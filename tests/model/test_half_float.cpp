#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "model/half_float.h"

namespace sparserl {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Reference narrowing by brute force: of the two bf16 values bracketing x, the nearer one,
// the even one on a tie.
uint16_t reference_bf16(float x) {
  const uint32_t u = bits_of(x);
  const uint16_t lo = static_cast<uint16_t>(u >> 16);
  const uint16_t hi = static_cast<uint16_t>(lo + 1);
  const double d_lo = std::fabs(static_cast<double>(x) - bf16_to_f32(lo));
  const double d_hi = std::fabs(static_cast<double>(bf16_to_f32(hi)) - x);
  if (d_lo != d_hi) return d_lo < d_hi ? lo : hi;
  return (lo & 1) ? hi : lo;
}

TEST(HalfFloat, Bf16WidenNarrowRoundTripsEveryValue) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_to_f32(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f)))) << b;
      continue;
    }
    EXPECT_EQ(f32_to_bf16(f), b);
  }
}

TEST(HalfFloat, Bf16NarrowingMatchesBruteForceNearestEven) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    const float x = float_of(any(rng));
    if (!std::isfinite(x) || std::fabs(x) > 3.0e38f) continue;
    ASSERT_EQ(f32_to_bf16(x), reference_bf16(x)) << std::hexfloat << x;
  }
  // Exact ties: low half 0x8000 rounds to the even neighbour.
  EXPECT_EQ(f32_to_bf16(float_of(0x3f808000u)), 0x3f80);
  EXPECT_EQ(f32_to_bf16(float_of(0x3f818000u)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
}

TEST(HalfFloat, F16WidenNarrowRoundTripsEveryValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << h;
      continue;
    }
    EXPECT_EQ(f32_to_f16(f), h) << std::hexfloat << f;
  }
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
}

// Midpoints between adjacent halves (normal and subnormal) must go to the even one, and a nudge
// either way must pick the nearer neighbour.
TEST(HalfFloat, F16NarrowingRoundsToNearestEven) {
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const float a = f16_to_f32(static_cast<uint16_t>(h));
    const float b = f16_to_f32(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((static_cast<double>(a) + b) / 2);  // exact in float
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    ASSERT_EQ(f32_to_f16(mid), even) << h;
    ASSERT_EQ(f32_to_f16(-mid), even | 0x8000) << h;
    ASSERT_EQ(f32_to_f16(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(f32_to_f16(std::nextafter(mid, 1e9f)), h + 1) << h;
  }
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // the tie above 65504 rounds to even: infinity
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);  // tie with zero: even is zero
  EXPECT_EQ(f32_to_f16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(f32_to_f16(1e-30f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
}

#if defined(__FLT16_MAX__)
// Where the compiler has a native half type, its conversion is an independent reference.
TEST(HalfFloat, F16NarrowingMatchesCompilerFloat16) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    const float x = float_of(any(rng) & 0xbfffffffu);  // keep magnitudes near half's range
    if (std::isnan(x)) continue;
    const _Float16 ref = static_cast<_Float16>(x);
    uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, sizeof ref_bits);
    ASSERT_EQ(f32_to_f16(x), ref_bits) << std::hexfloat << x;
  }
}
#endif

TEST(HalfFloat, BufferFormsConvertEachElement) {
  const float in[4] = {1.0f, -0.5f, 3.140625f, 0.0f};
  uint16_t half[4], bf[4];
  float back_half[4], back_bf[4];
  f32_to_f16(in, half, 4);
  f32_to_bf16(in, bf, 4);
  f16_to_f32(half, back_half, 4);
  bf16_to_f32(bf, back_bf, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(half[i], f32_to_f16(in[i]));
    EXPECT_EQ(back_half[i], in[i]);  // all four are exact in both formats
    EXPECT_EQ(back_bf[i], in[i]);
  }
}

}  // namespace
}  // namespace sparserl
