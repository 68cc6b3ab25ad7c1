#pragma once
// CUDA device-code emulation for the CPU executor (docs/security.md, eval/cpu_runner.h). Plain
// C++17: the CPU runner pastes this file, the program's device source and generated entry shims
// into one translation unit, g++ builds it into a shared object, and the sandboxed child
// (eval/emu/child_main.cpp) loads it and runs the launches. Correctness only, no timing.
//
// Execution model the device code can observe:
//  - Blocks run one after another; every CUDA thread of a block is a fiber on one OS thread.
//    Threads switch only inside __syncthreads*, __syncwarp and the warp collectives (shuffles,
//    votes, reductions), so a thread spinning on a value another thread must write never yields:
//    such programs end in a timeout. Atomics are plain read-modify-writes (nothing runs between).
//  - __shared__ is `static` storage in the section "sparserl_shared": one copy, which is correct
//    per-block shared memory because blocks never overlap. The child fills it with 0xff bytes
//    (NaN as float) before every block, so reading shared memory before writing it is visible.
//  - `extern __shared__ T name[];` (dynamic shared memory) is rewritten by the runner, before
//    compiling, into `#define name (reinterpret_cast<T*>(sparserl_emu_dynamic_shared))`: the
//    buffer is poisoned before every block and ends at a guard page.
//  - A __syncthreads that some thread of the block never reaches, or a warp collective whose
//    lanes never all arrive, is reported as a deadlock. A shuffle reading a lane that does not
//    take part (exited, or outside the block) gets all-ones bits: undefined on a GPU, NaN here.
//  - cuda_fp16.h / cuda_bf16.h are emulated below (storage types over float arithmetic).
//  - printf goes to a bounded log the runner returns; assert() failures and __trap() end the run
//    with a message; any system call (files, processes, sockets) kills the run.
// Block dimensions are 1-D (the kernel ABI launches block = (threads, 1, 1)).
#include <stdint.h>

// ---- The interface between emulated device code and the child runtime (both see this) ------
struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

namespace sparserl_emu {
enum warp_op : int {
  shfl_idx,
  shfl_up,
  shfl_down,
  shfl_xor,
  vote_ballot,
  vote_any,
  vote_all,
  sync_warp,
  reduce_add,
  reduce_min_u,
  reduce_max_u,
  reduce_min_i,
  reduce_max_i,
  reduce_and,
  reduce_or,
  reduce_xor,
  match_any,
  warp_op_count
};
enum barrier_op : int { bar_sync, bar_count, bar_and, bar_or };
}  // namespace sparserl_emu

extern "C" {
// Set by the runtime before a thread resumes, so they always hold the running thread's values.
extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;
extern unsigned char* sparserl_emu_dynamic_shared;
int sparserl_emu_syncthreads(int op, int predicate);
uint64_t sparserl_emu_warp(int op, unsigned int mask, uint64_t bits, int arg, int width);
unsigned int sparserl_emu_activemask(void);
int sparserl_emu_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
long long sparserl_emu_clock64(void);
__attribute__((noreturn)) void sparserl_emu_trap(const char* what);
}

#ifndef SPARSERL_EMU_RUNTIME
// ---- The CUDA surface (device code only) ---------------------------------------------------
#include <assert.h>  // the runtime replaces __assert_fail: a failed assert() ends the run
#include <float.h>
#include <limits.h>
#include <math.h>  // libstdc++'s math.h: the C functions plus std:: overloads, all global
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cstdio>  // included before the printf macro: a later <cstdio> would #undef it
#include <type_traits>

#define __CUDACC__ 1
#define __CUDACC_RTC__ 1
#define __CUDA_ARCH__ 900
#define __global__
#define __device__
#define __host__
#define __forceinline__
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
#define __managed__
#define __grid_constant__
#ifdef SPARSERL_EMU_SHARED_UNPOISONED
// Fallback when g++ cannot put every __shared__ in one section (volatile __shared__ next to one
// in an inline function is a "section type conflict"): plain statics, not poisoned per block.
#define __shared__ static
#else
#define __shared__ static __attribute__((section("sparserl_shared")))
#endif
#define printf sparserl_emu_printf
namespace std {
using ::sparserl_emu_printf;
}

static constexpr int warpSize = 32;

// ---- Built-in vector types ------------------------------------------------------------------
#define SPARSERL_EMU_VEC2(T, N, A)       \
  struct __attribute__((aligned(A))) N { \
    T x, y;                              \
  };                                     \
  inline N make_##N(T x, T y) { return N{x, y}; }
#define SPARSERL_EMU_VEC3(T, N) \
  struct N {                    \
    T x, y, z;                  \
  };                            \
  inline N make_##N(T x, T y, T z) { return N{x, y, z}; }
#define SPARSERL_EMU_VEC4(T, N, A)       \
  struct __attribute__((aligned(A))) N { \
    T x, y, z, w;                        \
  };                                     \
  inline N make_##N(T x, T y, T z, T w) { return N{x, y, z, w}; }
SPARSERL_EMU_VEC2(char, char2, 2)
SPARSERL_EMU_VEC4(char, char4, 4)
SPARSERL_EMU_VEC2(unsigned char, uchar2, 2)
SPARSERL_EMU_VEC4(unsigned char, uchar4, 4)
SPARSERL_EMU_VEC2(short, short2, 4)
SPARSERL_EMU_VEC4(short, short4, 8)
SPARSERL_EMU_VEC2(unsigned short, ushort2, 4)
SPARSERL_EMU_VEC4(unsigned short, ushort4, 8)
SPARSERL_EMU_VEC2(int, int2, 8)
SPARSERL_EMU_VEC3(int, int3)
SPARSERL_EMU_VEC4(int, int4, 16)
SPARSERL_EMU_VEC2(unsigned int, uint2, 8)
SPARSERL_EMU_VEC4(unsigned int, uint4, 16)
SPARSERL_EMU_VEC2(long long, longlong2, 16)
SPARSERL_EMU_VEC2(unsigned long long, ulonglong2, 16)
SPARSERL_EMU_VEC2(float, float2, 8)
SPARSERL_EMU_VEC3(float, float3)
SPARSERL_EMU_VEC4(float, float4, 16)
SPARSERL_EMU_VEC2(double, double2, 16)
SPARSERL_EMU_VEC3(double, double3)
SPARSERL_EMU_VEC4(double, double4, 16)
#undef SPARSERL_EMU_VEC2
#undef SPARSERL_EMU_VEC3
#undef SPARSERL_EMU_VEC4
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }

// ---- Barriers, fences, clocks ---------------------------------------------------------------
inline void __syncthreads() { sparserl_emu_syncthreads(sparserl_emu::bar_sync, 0); }
inline int __syncthreads_count(int p) {
  return sparserl_emu_syncthreads(sparserl_emu::bar_count, p);
}
inline int __syncthreads_and(int p) { return sparserl_emu_syncthreads(sparserl_emu::bar_and, p); }
inline int __syncthreads_or(int p) { return sparserl_emu_syncthreads(sparserl_emu::bar_or, p); }
// One OS thread and no preemption: every write is visible to the next thread that runs.
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}
inline void __nanosleep(unsigned int) {}
inline long long clock64() { return sparserl_emu_clock64(); }
__attribute__((noreturn)) inline void __trap() { sparserl_emu_trap("__trap() called"); }
__attribute__((noreturn)) inline void __brkpt() { sparserl_emu_trap("__brkpt() called"); }

// ---- Warp collectives -----------------------------------------------------------------------
template <typename T>
inline T sparserl_emu_exchange(int op, unsigned int mask, T value, int arg, int width) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "warp shuffles move values of at most 8 bytes");
  uint64_t bits = 0;
  __builtin_memcpy(&bits, &value, sizeof(T));
  bits = sparserl_emu_warp(op, mask, bits, arg, width);
  T out;
  __builtin_memcpy(&out, &bits, sizeof(T));
  return out;
}
template <typename T>
inline T __shfl_sync(unsigned int mask, T var, int src_lane, int width = warpSize) {
  return sparserl_emu_exchange(sparserl_emu::shfl_idx, mask, var, src_lane, width);
}
template <typename T>
inline T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize) {
  return sparserl_emu_exchange(sparserl_emu::shfl_up, mask, var, static_cast<int>(delta), width);
}
template <typename T>
inline T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize) {
  return sparserl_emu_exchange(sparserl_emu::shfl_down, mask, var, static_cast<int>(delta), width);
}
template <typename T>
inline T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = warpSize) {
  return sparserl_emu_exchange(sparserl_emu::shfl_xor, mask, var, lane_mask, width);
}
inline unsigned int __ballot_sync(unsigned int mask, int pred) {
  return static_cast<unsigned int>(
      sparserl_emu_warp(sparserl_emu::vote_ballot, mask, pred != 0, 0, warpSize));
}
inline int __any_sync(unsigned int mask, int pred) {
  return static_cast<int>(sparserl_emu_warp(sparserl_emu::vote_any, mask, pred != 0, 0, warpSize));
}
inline int __all_sync(unsigned int mask, int pred) {
  return static_cast<int>(sparserl_emu_warp(sparserl_emu::vote_all, mask, pred != 0, 0, warpSize));
}
inline void __syncwarp(unsigned int mask = 0xffffffffu) {
  sparserl_emu_warp(sparserl_emu::sync_warp, mask, 0, 0, warpSize);
}
inline unsigned int __activemask() { return sparserl_emu_activemask(); }
template <typename T>
inline unsigned int __match_any_sync(unsigned int mask, T value) {
  uint64_t bits = 0;
  __builtin_memcpy(&bits, &value, sizeof(T) < 8 ? sizeof(T) : 8);
  return static_cast<unsigned int>(
      sparserl_emu_warp(sparserl_emu::match_any, mask, bits, 0, warpSize));
}
inline unsigned int sparserl_emu_reduce(int op, unsigned int mask, unsigned int v) {
  return static_cast<unsigned int>(sparserl_emu_warp(op, mask, v, 0, warpSize));
}
inline unsigned int __reduce_add_sync(unsigned int mask, unsigned int v) {
  return sparserl_emu_reduce(sparserl_emu::reduce_add, mask, v);
}
inline int __reduce_add_sync(unsigned int mask, int v) {
  return static_cast<int>(sparserl_emu_reduce(sparserl_emu::reduce_add, mask, v));
}
inline unsigned int __reduce_min_sync(unsigned int mask, unsigned int v) {
  return sparserl_emu_reduce(sparserl_emu::reduce_min_u, mask, v);
}
inline int __reduce_min_sync(unsigned int mask, int v) {
  return static_cast<int>(sparserl_emu_reduce(sparserl_emu::reduce_min_i, mask, v));
}
inline unsigned int __reduce_max_sync(unsigned int mask, unsigned int v) {
  return sparserl_emu_reduce(sparserl_emu::reduce_max_u, mask, v);
}
inline int __reduce_max_sync(unsigned int mask, int v) {
  return static_cast<int>(sparserl_emu_reduce(sparserl_emu::reduce_max_i, mask, v));
}
inline unsigned int __reduce_and_sync(unsigned int mask, unsigned int v) {
  return sparserl_emu_reduce(sparserl_emu::reduce_and, mask, v);
}
inline unsigned int __reduce_or_sync(unsigned int mask, unsigned int v) {
  return sparserl_emu_reduce(sparserl_emu::reduce_or, mask, v);
}
inline unsigned int __reduce_xor_sync(unsigned int mask, unsigned int v) {
  return sparserl_emu_reduce(sparserl_emu::reduce_xor, mask, v);
}

// ---- Atomics: nothing else runs during a device function call, so plain updates are atomic --
template <typename T, typename U>
inline T atomicAdd(T* p, U v) {
  const T old = *p;
  if constexpr (std::is_integral<T>::value)  // wraps like the hardware, no signed overflow UB
    *p = static_cast<T>(static_cast<std::make_unsigned_t<T>>(old) +
                        static_cast<std::make_unsigned_t<T>>(static_cast<T>(v)));
  else
    *p = old + static_cast<T>(v);
  return old;
}
template <typename T, typename U>
inline T atomicSub(T* p, U v) {
  const T old = *p;
  *p = static_cast<T>(static_cast<std::make_unsigned_t<T>>(old) -
                      static_cast<std::make_unsigned_t<T>>(static_cast<T>(v)));
  return old;
}
template <typename T, typename U>
inline T atomicExch(T* p, U v) {
  const T old = *p;
  *p = static_cast<T>(v);
  return old;
}
template <typename T, typename U>
inline T atomicMin(T* p, U v) {
  const T old = *p;
  if (static_cast<T>(v) < old) *p = static_cast<T>(v);
  return old;
}
template <typename T, typename U>
inline T atomicMax(T* p, U v) {
  const T old = *p;
  if (old < static_cast<T>(v)) *p = static_cast<T>(v);
  return old;
}
template <typename T, typename U, typename V>
inline T atomicCAS(T* p, U compare, V v) {
  const T old = *p;
  if (old == static_cast<T>(compare)) *p = static_cast<T>(v);
  return old;
}
template <typename T, typename U>
inline T atomicAnd(T* p, U v) {
  const T old = *p;
  *p = old & static_cast<T>(v);
  return old;
}
template <typename T, typename U>
inline T atomicOr(T* p, U v) {
  const T old = *p;
  *p = old | static_cast<T>(v);
  return old;
}
template <typename T, typename U>
inline T atomicXor(T* p, U v) {
  const T old = *p;
  *p = old ^ static_cast<T>(v);
  return old;
}
inline unsigned int atomicInc(unsigned int* p, unsigned int v) {
  const unsigned int old = *p;
  *p = old >= v ? 0u : old + 1u;
  return old;
}
inline unsigned int atomicDec(unsigned int* p, unsigned int v) {
  const unsigned int old = *p;
  *p = (old == 0u || old > v) ? v : old - 1u;
  return old;
}
#define SPARSERL_EMU_SCOPED_ATOMIC(name) \
  template <typename... A>               \
  inline auto name##_block(A... a) {     \
    return name(a...);                   \
  }                                      \
  template <typename... A>               \
  inline auto name##_system(A... a) {    \
    return name(a...);                   \
  }
SPARSERL_EMU_SCOPED_ATOMIC(atomicAdd)
SPARSERL_EMU_SCOPED_ATOMIC(atomicSub)
SPARSERL_EMU_SCOPED_ATOMIC(atomicExch)
SPARSERL_EMU_SCOPED_ATOMIC(atomicMin)
SPARSERL_EMU_SCOPED_ATOMIC(atomicMax)
SPARSERL_EMU_SCOPED_ATOMIC(atomicCAS)
SPARSERL_EMU_SCOPED_ATOMIC(atomicAnd)
SPARSERL_EMU_SCOPED_ATOMIC(atomicOr)
SPARSERL_EMU_SCOPED_ATOMIC(atomicXor)
#undef SPARSERL_EMU_SCOPED_ATOMIC

// ---- Cache-hinted loads and stores: plain memory here ----------------------------------------
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
template <typename T>
inline T __ldcg(const T* p) {
  return *p;
}
template <typename T>
inline T __ldca(const T* p) {
  return *p;
}
template <typename T>
inline T __ldcs(const T* p) {
  return *p;
}
template <typename T>
inline T __ldlu(const T* p) {
  return *p;
}
template <typename T>
inline T __ldcv(const T* p) {
  return *p;
}
template <typename T>
inline void __stwb(T* p, T v) {
  *p = v;
}
template <typename T>
inline void __stcg(T* p, T v) {
  *p = v;
}
template <typename T>
inline void __stcs(T* p, T v) {
  *p = v;
}
template <typename T>
inline void __stwt(T* p, T v) {
  *p = v;
}

// ---- min / max as CUDA's overload set has them (mixed arguments promote) ---------------------
template <typename A, typename B>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point<C>::value)
    return fmin(static_cast<C>(a), static_cast<C>(b));
  else
    return static_cast<C>(b) < static_cast<C>(a) ? static_cast<C>(b) : static_cast<C>(a);
}
template <typename A, typename B>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point<C>::value)
    return fmax(static_cast<C>(a), static_cast<C>(b));
  else
    return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(b) : static_cast<C>(a);
}
inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
inline unsigned int umax(unsigned int a, unsigned int b) { return a < b ? b : a; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a < b ? b : a; }

// ---- Float intrinsics (rounding-mode suffixes map to the default round-to-nearest) ------------
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline void __sincosf(float x, float* s, float* c) {
  *s = sinf(x);
  *c = cosf(x);
}
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
#define SPARSERL_EMU_ROUNDED(name, expr)                    \
  inline float name##_rn(float a, float b) { return expr; } \
  inline float name##_rz(float a, float b) { return expr; } \
  inline float name##_ru(float a, float b) { return expr; } \
  inline float name##_rd(float a, float b) { return expr; }
SPARSERL_EMU_ROUNDED(__fadd, a + b)
SPARSERL_EMU_ROUNDED(__fsub, a - b)
SPARSERL_EMU_ROUNDED(__fmul, a* b)
SPARSERL_EMU_ROUNDED(__fdiv, a / b)
#undef SPARSERL_EMU_ROUNDED
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fmaf_rz(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fmaf_ru(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fmaf_rd(float a, float b, float c) { return fmaf(a, b, c); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline double __dsqrt_rn(double x) { return sqrt(x); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

// ---- Conversions and bit casts --------------------------------------------------------------
template <typename To, typename From>
inline To sparserl_emu_bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit casts keep the size");
  To out;
  __builtin_memcpy(&out, &v, sizeof(To));
  return out;
}
inline int __float_as_int(float x) { return sparserl_emu_bit_cast<int>(x); }
inline unsigned int __float_as_uint(float x) { return sparserl_emu_bit_cast<unsigned int>(x); }
inline float __int_as_float(int x) { return sparserl_emu_bit_cast<float>(x); }
inline float __uint_as_float(unsigned int x) { return sparserl_emu_bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return sparserl_emu_bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return sparserl_emu_bit_cast<double>(x); }
inline int __double2hiint(double x) {
  return static_cast<int>(sparserl_emu_bit_cast<unsigned long long>(x) >> 32);
}
inline int __double2loint(double x) {
  return static_cast<int>(sparserl_emu_bit_cast<unsigned long long>(x) & 0xffffffffull);
}
inline double __hiloint2double(int hi, int lo) {
  return sparserl_emu_bit_cast<double>(
      (static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
      static_cast<unsigned>(lo));
}
inline int __float2int_rn(float x) { return static_cast<int>(nearbyintf(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __float2int_rd(float x) { return static_cast<int>(floorf(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(ceilf(x)); }
inline unsigned int __float2uint_rn(float x) { return static_cast<unsigned int>(nearbyintf(x)); }
inline unsigned int __float2uint_rz(float x) { return static_cast<unsigned int>(x); }
inline long long __float2ll_rn(float x) { return static_cast<long long>(nearbyintf(x)); }
inline long long __float2ll_rz(float x) { return static_cast<long long>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned int x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline int __double2int_rn(double x) { return static_cast<int>(nearbyint(x)); }
inline int __double2int_rz(double x) { return static_cast<int>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }

// ---- Integer intrinsics ---------------------------------------------------------------------
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
  unsigned int r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned int>(x))) << 32) |
         __brev(static_cast<unsigned int>(x >> 32));
}
inline int __mul24(int a, int b) {
  return static_cast<int>(static_cast<long long>((a << 8) >> 8) * ((b << 8) >> 8));
}
inline unsigned int __umul24(unsigned int a, unsigned int b) {
  return (a & 0xffffffu) * (b & 0xffffffu);
}
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline unsigned int __sad(int a, int b, unsigned int c) {
  return c + static_cast<unsigned int>(a > b ? static_cast<long long>(a) - b
                                             : static_cast<long long>(b) - a);
}
inline unsigned int __usad(unsigned int a, unsigned int b, unsigned int c) {
  return c + (a > b ? a - b : b - a);
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>((v << (s & 31u)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>(v >> (s & 31u));
}
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned int r = 0;
  for (int i = 0; i < 4; ++i)
    r |= static_cast<unsigned int>((v >> (((s >> (4 * i)) & 7u) * 8)) & 0xffu) << (8 * i);
  return r;
}
// ---- cuda_fp16.h / cuda_bf16.h: 16-bit storage types; arithmetic goes through float -----------
// Conversions round to nearest even like the hardware's _rn forms; operators convert to float,
// so chained expressions round once at the end rather than after every operation.
inline unsigned short sparserl_emu_float_to_half(float f) {
  uint32_t x;
  __builtin_memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xffu) return static_cast<unsigned short>(sign | 0x7c00u | (man ? 0x200u : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<unsigned short>(sign | 0x7c00u);
  uint32_t h, rem, half;
  if (e <= 0) {  // a half subnormal (or zero)
    if (e < -10) return static_cast<unsigned short>(sign);
    man |= 0x800000u;
    const int shift = 14 - e;
    h = man >> shift;
    rem = man & ((1u << shift) - 1u);
    half = 1u << (shift - 1);
  } else {
    h = (static_cast<uint32_t>(e) << 10) | (man >> 13);
    rem = man & 0x1fffu;
    half = 0x1000u;
  }
  if (rem > half || (rem == half && (h & 1u))) ++h;  // a carry into the exponent is right too
  return static_cast<unsigned short>(sign | h);
}
inline float sparserl_emu_half_to_float(unsigned short h) {
  const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu, x;
  if (exp == 0x1fu) {
    x = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    x = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    x = sign;
  } else {  // subnormal: normalise
    uint32_t e = 113;
    while (!(man & 0x400u)) {
      man <<= 1;
      --e;
    }
    x = sign | (e << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  __builtin_memcpy(&f, &x, 4);
  return f;
}
inline unsigned short sparserl_emu_float_to_bf16(float f) {
  uint32_t x;
  __builtin_memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((x >> 16) | 0x40u);
  return static_cast<unsigned short>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float sparserl_emu_bf16_to_float(unsigned short b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &x, 4);
  return f;
}
#define SPARSERL_EMU_HALF_TYPE(T, T2, to_bits, to_float)                             \
  struct T {                                                                         \
    unsigned short __x;                                                              \
    T() = default;                                                                   \
    template <typename A, typename = std::enable_if_t<std::is_arithmetic<A>::value>> \
    T(A v) : __x(to_bits(static_cast<float>(v))) {}                                  \
    operator float() const { return to_float(__x); }                                 \
    T& operator+=(float v) { return *this = T(float(*this) + v); }                   \
    T& operator-=(float v) { return *this = T(float(*this) - v); }                   \
    T& operator*=(float v) { return *this = T(float(*this) * v); }                   \
    T& operator/=(float v) { return *this = T(float(*this) / v); }                   \
  };                                                                                 \
  struct __attribute__((aligned(4))) T2 {                                            \
    T x, y;                                                                          \
  };
SPARSERL_EMU_HALF_TYPE(__half, __half2, sparserl_emu_float_to_half, sparserl_emu_half_to_float)
SPARSERL_EMU_HALF_TYPE(__nv_bfloat16, __nv_bfloat162, sparserl_emu_float_to_bf16,
                       sparserl_emu_bf16_to_float)
#undef SPARSERL_EMU_HALF_TYPE
typedef __half half;
typedef __half2 half2;
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2{__half(a), __half(b)}; }
inline __half2 __float2half2_rn(float a) { return __half2{__half(a), __half(a)}; }
inline __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
inline float2 __half22float2(__half2 h) { return float2{float(h.x), float(h.y)}; }
inline float __low2float(__half2 h) { return float(h.x); }
inline float __high2float(__half2 h) { return float(h.y); }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half __ushort_as_half(unsigned short v) {
  __half h;
  h.__x = v;
  return h;
}
inline __half __hadd(__half a, __half b) { return __half(float(a) + float(b)); }
inline __half __hsub(__half a, __half b) { return __half(float(a) - float(b)); }
inline __half __hmul(__half a, __half b) { return __half(float(a) * float(b)); }
inline __half __hdiv(__half a, __half b) { return __half(float(a) / float(b)); }
inline __half __hfma(__half a, __half b, __half c) { return __half(fmaf(a, b, c)); }
inline __half __hneg(__half a) { return __half(-float(a)); }
inline __half __habs(__half a) { return __half(fabsf(a)); }
inline __half __hmax(__half a, __half b) { return __half(fmaxf(a, b)); }
inline __half __hmin(__half a, __half b) { return __half(fminf(a, b)); }
inline __half2 __hadd2(__half2 a, __half2 b) { return __half2{__hadd(a.x, b.x), __hadd(a.y, b.y)}; }
inline __half2 __hmul2(__half2 a, __half2 b) { return __half2{__hmul(a.x, b.x), __hmul(a.y, b.y)}; }
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return __half2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return float(b); }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(b)};
}
inline float2 __bfloat1622float2(__nv_bfloat162 b) { return float2{float(b.x), float(b.y)}; }
#endif  // SPARSERL_EMU_RUNTIME
