#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "eval/source_screen.h"

namespace sparserl {
namespace {

using ::testing::HasSubstr;

// A realistic kernel using the constructs the screen must let through.
const char* const good_kernel = R"src(#include <cuda_fp16.h>
#define TILE 32
#define STR(x) #x
#ifndef SPARSERL_BLOCK
#define SPARSERL_BLOCK 256
#endif
template <int N> __device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = N / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
extern __shared__ float scratch[];
// asm, printf and malloc in a comment are fine; so is "system(\"x\")" in a string.
extern "C" __global__ void __launch_bounds__(SPARSERL_BLOCK) spmv_csr(
    int rows, int cols, int nnz, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
    const float* __restrict__ values, const float* __restrict__ x, float* __restrict__ y) {
  const int row = blockIdx.x * (blockDim.x / TILE) + threadIdx.x / TILE;
  if (row >= rows) return;
  float sum = 0.f;
  for (int i = row_ptr[row] + threadIdx.x % TILE; i < row_ptr[row + 1]; i += TILE)
    sum = __fmaf_rn(values[i], __ldg(&x[col_idx[i]]), sum);
  sum = warp_sum<TILE>(sum);
  if (threadIdx.x % TILE == 0) atomicAdd(&y[row], __half2float(__float2half(sum)));
  static_assert(sizeof(STR(a)) == 2, "stringize");
  __syncthreads();
}
)src";

std::string reason(const std::string& source) {
  const screen_result r = screen_device_source(source);
  EXPECT_FALSE(r.ok) << source;
  EXPECT_GT(r.line, 0);
  return r.reason;
}

void accepted(const std::string& source) {
  const screen_result r = screen_device_source(source);
  EXPECT_TRUE(r.ok) << r.reason << "\n" << source;
}

TEST(source_screen, realistic_kernel_passes) {
  const screen_result r = screen_device_source(good_kernel);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.line, 0);
  EXPECT_TRUE(r.reason.empty());
}

TEST(source_screen, includes) {
  EXPECT_EQ(reason("int a;\n#include <stdio.h>\n"),
            "line 2: #include of 'stdio.h' is not allowed (allowed: cuda_fp16.h, cuda_bf16.h)");
  EXPECT_THAT(reason("#include \"/etc/passwd\"\n"), HasSubstr("'/etc/passwd' is not allowed"));
  EXPECT_EQ(reason("#define H <cuda_fp16.h>\n#include H\n"),
            "line 2: #include must name a header literally");
  EXPECT_THAT(reason("%:include <stdlib.h>\n"), HasSubstr("'stdlib.h' is not allowed"));
  EXPECT_THAT(reason("#include_next <cuda_fp16.h>\n"), HasSubstr("'#include_next'"));
  accepted("#include <cuda_bf16.h>\n#include \"cuda_fp16.h\" // half\n");
  screen_options none;
  none.allowed_includes.clear();
  EXPECT_THAT(screen_device_source("#include <cuda_fp16.h>\n", none).reason,
              HasSubstr("(allowed: none)"));
}

TEST(source_screen, inline_assembly) {
  EXPECT_EQ(reason("__device__ void f() {\n  asm volatile(\"trap;\");\n}\n"),
            "line 2: 'asm' is not allowed (no inline assembly)");
  EXPECT_THAT(reason("__asm__(\"x\");"), HasSubstr("'__asm__'"));
  EXPECT_THAT(reason("__asm(\"x\");"), HasSubstr("'__asm'"));
  EXPECT_THAT(reason("a\\\nsm(\"x\");"), HasSubstr("'asm'"));  // spliced back together
  accepted("// asm(\"trap;\")\n/* __asm__ */ const char* s = \"asm volatile\";\nint asmx;\n");
}

TEST(source_screen, token_building) {
  EXPECT_EQ(reason("#define J(a, b) a##b\n"), "line 1: token pasting ('##') is not allowed");
  EXPECT_THAT(reason("#define J(a, b) a %:%: b\n"), HasSubstr("'##'"));
  EXPECT_THAT(reason("_Pragma(\"message(\\\"x\\\")\")"), HasSubstr("'_Pragma'"));
  EXPECT_THAT(reason("int x = 1; ?"
                     "?=define A\n"),
              HasSubstr("trigraph '?"
                        "?='"));
  EXPECT_THAT(reason("int \\u0061sm;"), HasSubstr("stray backslash"));
  EXPECT_THAT(reason("const char* s = R\"(x)\";"), HasSubstr("raw string"));
  accepted("#define S(a) #a\nconst char* s = S(x);\n");
}

TEST(source_screen, pragmas) {
  EXPECT_EQ(reason("#pragma once\n"),
            "line 1: '#pragma once' is not allowed (only #pragma unroll and #pragma nounroll)");
  EXPECT_THAT(reason("#pragma GCC optimize(\"O0\")\n"), HasSubstr("'#pragma GCC'"));
  EXPECT_THAT(reason("#pragma\n"), HasSubstr("'#pragma '"));
  accepted("#pragma unroll\n#pragma unroll 4\n#pragma nounroll\n");
}

TEST(source_screen, other_directives) {
  EXPECT_THAT(reason("#line 10 \"x.cu\"\n"), HasSubstr("'#line' is not allowed"));
  EXPECT_THAT(reason("# 10 \"x.cu\"\n"), HasSubstr("line markers"));
  EXPECT_THAT(reason("int a; # define X\n"), HasSubstr("stray '#'"));
  accepted("#\n#if 1\n#elif 2\n#else\n#endif\n#undef X\n#ifdef Y\n#error no\n#endif\n");
}

TEST(source_screen, io_and_allocation) {
  EXPECT_EQ(reason("__device__ void f() { printf(\"%d\", 1); }"),
            "line 1: 'printf' is not allowed (no I/O in device code)");
  EXPECT_THAT(reason("float* p = (float*)malloc(4);"), HasSubstr("'malloc' is not allowed"));
  EXPECT_THAT(reason("free(p);"), HasSubstr("'free'"));
  EXPECT_THAT(reason("int* p = new int[4];"), HasSubstr("'new'"));
  EXPECT_THAT(reason("delete p;"), HasSubstr("'delete'"));
  accepted("__device__ int freelist_head; int printfx; int new_value;");
}

TEST(source_screen, dynamic_parallelism_and_runtime_api) {
  EXPECT_EQ(reason("k<<<1, 1>>>(x);"), "line 1: '<<<' is not allowed (no dynamic parallelism)");
  EXPECT_THAT(reason("cudaLaunchDevice(0, 0, d, b, 0);"), HasSubstr("no dynamic parallelism"));
  EXPECT_THAT(reason("cudaGetParameterBuffer(1, 2);"), HasSubstr("cudaGetParameterBuffer"));
  EXPECT_THAT(reason("cudaDeviceSynchronize();"), HasSubstr("cudaDeviceSynchronize"));
  EXPECT_THAT(reason("cudaMemcpyAsync(a, b, 4, k);"), HasSubstr("runtime or driver API"));
  EXPECT_THAT(reason("cuLaunchKernel(f);"), HasSubstr("runtime or driver API"));
  accepted("int a = b << c; int d = e << (f < g); int cuda_rows; int cut;");
}

TEST(source_screen, extern_forms) {
  EXPECT_EQ(reason("extern int system_table;"),
            "line 1: 'extern' is allowed only as 'extern \"C\" __global__ void <entry>(' and "
            "'extern __shared__'");
  EXPECT_THAT(reason("extern \"C\" { __global__ void f(); }"), HasSubstr("'extern'"));
  EXPECT_THAT(reason("extern \"C\" __device__ int f(int);"), HasSubstr("'extern'"));
  EXPECT_THAT(reason("extern \"C\" __global__ int f(int);"), HasSubstr("'extern'"));
  accepted("extern \"C\" __global__ void spmv_csr(int rows) {}\nextern __shared__ float s[];");
}

TEST(source_screen, host_code) {
  EXPECT_EQ(reason("__host__ __device__ int f() { return 0; }"),
            "line 1: '__host__' is not allowed (device code only: no host functions)");
  EXPECT_THAT(reason("int main() { return 0; }"), HasSubstr("'main'"));
  EXPECT_THAT(reason("#ifndef __CUDA_ARCH__\nint h;\n#endif\n"), HasSubstr("'__CUDA_ARCH__'"));
  EXPECT_THAT(reason("#if defined(__CUDACC_RTC__)\n#endif\n"), HasSubstr("'__CUDACC_RTC__'"));
  EXPECT_THAT(reason("__attribute__((constructor)) void f() {}"), HasSubstr("'__attribute__'"));
  accepted("__device__ __forceinline__ int f() { return 0; }");
}

TEST(source_screen, system_file_and_process_calls) {
  for (const char* call :
       {"system(\"ls\")", "fopen(\"f\", \"r\")", "execve(a, b, c)", "fork()", "syscall(60)",
        "dlopen(\"x\", 1)", "mprotect(p, 4, 7)", "exit(0)", "getenv(\"HOME\")", "kill(1, 9)"}) {
    const std::string src = std::string("__device__ void f() { ") + call + "; }";
    const std::string name = std::string(call).substr(0, std::string(call).find('('));
    EXPECT_EQ(reason(src),
              "line 1: '" + name + "' is not allowed (no system, file or process calls)");
  }
  accepted("__device__ int systemic(int file) { return file; }");
}

TEST(source_screen, reserved_identifiers_need_the_allow_list) {
  EXPECT_THAT(reason("int x = __FILE__[0];"), HasSubstr("reserved identifiers"));
  EXPECT_THAT(reason("void* p = __builtin_frame_address(0);"), HasSubstr("compiler built-ins"));
  EXPECT_THAT(reason("_Atomic int x;"), HasSubstr("'_Atomic'"));
  EXPECT_THAT(reason("__managed__ int x;"), HasSubstr("'__managed__'"));
  accepted(
      "float a = __fdividef(1.f, 2.f) + __int_as_float(__popc(3)) + __expf(0.f);\n"
      "unsigned m = __ballot_sync(~0u, 1) & __activemask(); __syncwarp();\n"
      "int b = __builtin_expect(m, 0); double d = __longlong_as_double(0ll);\n"
      "float c = __ldcs(&a) + __shfl_xor_sync(~0u, a, 1); __threadfence_block();\n"
      "int _lower_ok; int x_; int a__b;");
}

TEST(source_screen, bytes_and_lexical_errors) {
  EXPECT_EQ(reason(std::string("int a;\nint b;") + '\0'), "line 2: NUL byte");
  EXPECT_EQ(reason("int a;\r int b;"), "line 1: carriage return not followed by a newline");
  EXPECT_THAT(reason("int a;\x01"), HasSubstr("control character"));
  EXPECT_EQ(reason("int a; /* open"), "line 1: unterminated comment");
  EXPECT_EQ(reason("int a;\nconst char* s = \"abc;\n"), "line 2: unterminated string literal");
  EXPECT_THAT(reason("int a = b @ c;"), HasSubstr("unexpected character '@'"));
  EXPECT_THAT(reason("int \xc3\xa9t\xc3\xa9;"), HasSubstr("non-ASCII byte"));
  screen_options small;
  small.max_bytes = 10;
  EXPECT_THAT(screen_device_source("int abcdefgh;", small).reason, HasSubstr("above the limit"));
  accepted("int a;\r\n// caf\xc3\xa9 \x7e\nconst char* s = \"\xc3\xa9\";\n");
}

}  // namespace
}  // namespace sparserl
