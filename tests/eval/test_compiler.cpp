// NVRTC runs without a GPU, so these compile real device code on the CPU machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "eval/compiler.h"
#include "eval/source_screen.h"
#include "kernel/abi.h"
#include "kernel/completion.h"

namespace sparserl {
namespace {

using ::testing::HasSubstr;

const std::string csr_kernel = R"(
extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ row_ptr,
                                    const int* __restrict__ col_idx,
                                    const float* __restrict__ values,
                                    const float* __restrict__ x, float* __restrict__ y) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.f;
  for (int i = row_ptr[r]; i < row_ptr[r + 1]; ++i) s += values[i] * __ldg(&x[col_idx[i]]);
  y[r] = s;
}
)";

// 2^N distinct ever-longer types: the front end never finishes (nor runs out quickly).
const std::string template_bomb = R"(
template <typename A, typename B> struct P {};
template <int N, typename T> struct E { using type = typename E<N - 1, P<T, T>>::type; };
template <typename T> struct E<0, T> { using type = T; };
template <typename T> __device__ void use(T*) {}
extern "C" __global__ void k(float* y) { use((E<40, float>::type*)nullptr); }
)";

// Forced inlining of a doubling call tree: 2^22 copies for the optimiser, memory-hungry.
const std::string inline_bomb = R"(
template <int N> __device__ __forceinline__ float g(const float* x, int i) {
  return g<N - 1>(x, i) * 1.0001f + g<N - 1>(x, i + N);
}
template <> __device__ __forceinline__ float g<0>(const float* x, int i) { return x[i]; }
extern "C" __global__ void k(const float* x, float* y) { y[threadIdx.x] = g<22>(x, threadIdx.x); }
)";

TEST(compiler, good_program_gives_a_cubin) {
  const compile_result r = compile_device_source(csr_kernel);
  ASSERT_TRUE(r.ok) << r.error << "\n" << r.log;
  EXPECT_TRUE(r.error.empty());
  ASSERT_GT(r.cubin.size(), 4u);
  EXPECT_EQ(std::string(r.cubin.data(), 4),
            "\x7f"
            "ELF");
  EXPECT_FALSE(r.timed_out);
  EXPECT_GT(r.ms, 0);
}

TEST(compiler, flags_are_the_documented_ones) {
  compile_options o;
  o.arch = "sm_80";
  o.lineinfo = true;
  o.include_dirs = {"/x/include", ""};
  EXPECT_EQ(nvrtc_flags(o),
            (std::vector<std::string>{"--gpu-architecture=sm_80", "-default-device", "--std=c++17",
                                      "-lineinfo", "--include-path=/x/include"}));
  const compile_result r = compile_device_source(csr_kernel, o);  // another arch compiles too
  EXPECT_TRUE(r.ok) << r.error;
}

TEST(compiler, allowed_headers_are_found) {
  const compile_result r = compile_device_source(
      "#include <cuda_fp16.h>\n"
      "extern \"C\" __global__ void k(float* y) { y[0] = __half2float(__float2half(y[0])); }\n");
  EXPECT_TRUE(r.ok) << r.error << "\n" << r.log;
}

TEST(compiler, a_forbidden_system_call_in_the_compiler_is_named) {
  // The NVRTC child's test hook makes a call its seccomp allow-list forbids, as an exploited
  // compiler would; the child dies of SIGSYS and the compile fails naming the call.
  ::setenv("SPARSERL_NVRTC_CHILD_TEST_FORBIDDEN_CALL", "1", 1);
  const compile_result r = compile_device_source(csr_kernel);
  ::unsetenv("SPARSERL_NVRTC_CHILD_TEST_FORBIDDEN_CALL");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "sandbox: forbidden system call socket") << r.log;
  EXPECT_TRUE(compile_device_source(csr_kernel).ok);  // and without the hook all is well
}

TEST(compiler, syntax_error_reports_the_line) {
  const compile_result r = compile_device_source(
      "extern \"C\" __global__ void k(float* y) {\n  y[0] = no_such_name;\n}\n");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.source_error);
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_THAT(r.log, HasSubstr("program.cu(2)"));
  EXPECT_THAT(r.error, HasSubstr("compile error: program.cu(2)"));
}

TEST(compiler, log_is_truncated_to_the_limit) {
  std::string many;
  for (int i = 0; i < 200; ++i)
    many += "int f" + std::to_string(i) + " = undefined_" + std::to_string(i) + ";\n";
  compile_options o;
  o.max_log_bytes = 300;
  const compile_result r = compile_device_source(many, o);
  EXPECT_FALSE(r.ok);
  EXPECT_LT(r.log.size(), 400u);
  EXPECT_THAT(r.log, HasSubstr("[log truncated"));
}

TEST(compiler, template_bomb_is_stopped_by_the_timeout) {
  compile_options o;
  o.timeout_s = 1.5;
  const compile_result r = compile_device_source(template_bomb, o);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.error, "compile timed out after 1.5 s of CPU time");
  EXPECT_LT(r.ms, 10000);
}

TEST(compiler, inline_bomb_hits_the_memory_limit) {
  compile_options o;
  o.memory_bytes = int64_t{256} << 20;
  o.timeout_s = 15;
  const compile_result r = compile_device_source(inline_bomb, o);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.out_of_memory) << r.error << "\n" << r.log;
  EXPECT_THAT(r.error, HasSubstr("compile exceeded memory limit (256 MiB)"));
  EXPECT_FALSE(r.source_error);
}

TEST(compiler, nul_bytes_are_refused) {
  const compile_result r = compile_device_source(csr_kernel + std::string(1, '\0') + "junk");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("NUL"));
}

// The ```cuda blocks of docs/kernel-abi.md that hold a whole program.
std::vector<std::string> documented_examples() {
  std::ifstream in(SPARSERL_SOURCE_DIR "/docs/kernel-abi.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  std::vector<std::string> out;
  const std::string open = "```cuda\nFORMAT:";
  for (size_t at = doc.find(open); at != std::string::npos; at = doc.find(open, at + 1)) {
    const size_t begin = at + 8, end = doc.find("\n```\n", begin);
    if (end != std::string::npos) out.push_back(doc.substr(begin, end + 1 - begin));
  }
  return out;
}

TEST(compiler, documented_examples_parse_pass_the_screen_and_compile) {
  const std::vector<std::string> examples = documented_examples();
  ASSERT_EQ(examples.size(), 2u);
  for (const std::string& text : examples) {
    const parse_result parsed = parse_completion(text, sparse_op::spmv);
    ASSERT_TRUE(parsed.program) << parsed.error << "\n" << text;
    const std::string device = parameter_defines(*parsed.program) + parsed.program->source;
    const screen_result screened = screen_device_source(device);
    EXPECT_TRUE(screened.ok) << screened.reason;
    const compile_result r = compile_device_source(device);
    EXPECT_TRUE(r.ok) << r.error << "\n" << r.log;
  }
}

TEST(compile_cache, hit_returns_the_same_image_without_compiling) {
  compile_cache cache;
  const auto first = cache.compile(csr_kernel);
  const auto second = cache.compile(csr_kernel);
  ASSERT_TRUE(first->ok) << first->error;
  EXPECT_EQ(first.get(), second.get());
  compile_cache::stats s = cache.statistics();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.entries, 1u);
  // Another arch is another key; so is another source.
  compile_options o;
  o.arch = "sm_80";
  EXPECT_NE(cache.compile(csr_kernel, o).get(), first.get());
  EXPECT_NE(cache.compile(csr_kernel + "\n// v2\n").get(), first.get());
  EXPECT_EQ(cache.statistics().compiles, 3);
}

TEST(compile_cache, concurrent_requests_compile_once_and_errors_are_kept) {
  std::atomic<int> calls{0};
  compile_cache cache(16, int64_t{1} << 30, [&](const std::string& s, const compile_options& o) {
    ++calls;
    return compile_device_source(s, o);
  });
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const compile_result>> got(4);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] { got[i] = cache.compile("bad source;"); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(calls.load(), 1);
  for (const auto& g : got) EXPECT_EQ(g.get(), got[0].get());
  EXPECT_TRUE(got[0]->source_error);
  cache.compile("bad source;");
  EXPECT_EQ(calls.load(), 1);
}

TEST(compile_cache, failures_of_the_process_are_not_kept_and_lru_evicts) {
  int calls = 0;
  compile_cache cache(2, int64_t{1} << 30, [&](const std::string& s, const compile_options&) {
    ++calls;
    compile_result r;
    r.timed_out = s == "slow";
    r.ok = !r.timed_out;
    r.cubin.assign(s.begin(), s.end());
    return r;
  });
  cache.compile("slow");
  cache.compile("slow");
  EXPECT_EQ(calls, 2);  // a timeout is retried
  cache.compile("a");
  cache.compile("b");
  cache.compile("a");  // a is now the most recent
  cache.compile("c");  // evicts b
  EXPECT_EQ(cache.statistics().entries, 2u);
  const int before = calls;
  cache.compile("a");
  EXPECT_EQ(calls, before);
  cache.compile("b");
  EXPECT_EQ(calls, before + 1);

  compile_cache tiny(100, 10, [&](const std::string& s, const compile_options&) {
    compile_result r;
    r.ok = true;
    r.cubin.assign(1000, 'x');
    (void)s;
    return r;
  });
  tiny.compile("x");
  tiny.compile("y");
  EXPECT_LE(tiny.statistics().entries, 1u);  // over the byte budget: only the newest stays
}

}  // namespace
}  // namespace sparserl
