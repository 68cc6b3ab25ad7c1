// The text the CPU runner compiles: CUDA-only constructs rewritten, line numbers kept, shims.
#include <gtest/gtest.h>

#include <algorithm>

#include "eval/cpu_program_source.h"

namespace sparserl {
namespace {

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(cpu_program_source, extern_shared_becomes_a_macro_and_keeps_line_numbers) {
  const std::string src =
      "__global__ void k() {\n"
      "  extern __shared__ __align__(sizeof(float4)) unsigned char raw[]; raw[0] = 1;\n"
      "  x = 2;\n"
      "}\n";
  const std::string out = rewrite_for_emulation(src);
  EXPECT_NE(out.find("#define raw (reinterpret_cast<unsigned char*>(sparserl_emu_dynamic_shared))"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("extern __shared__"), std::string::npos) << out;
  // The rest of line 2 is renumbered as line 2, so "x = 2" stays on line 3.
  const size_t line_directive = out.find("#line 2\n raw[0] = 1;\n  x = 2;");
  EXPECT_NE(line_directive, std::string::npos) << out;
}

TEST(cpu_program_source, unsupported_extern_shared_forms_are_left_for_the_compiler) {
  const std::string src = "extern __shared__ float a[], b[];\n";
  EXPECT_EQ(rewrite_for_emulation(src), src);
}

TEST(cpu_program_source, cuda_runtime_includes_become_comments_and_others_stay) {
  const std::string src =
      "#include <cuda_runtime.h>\n#include \"cuda.h\"\n#include <cstdio>\nint x;\n";
  const std::string out = rewrite_for_emulation(src);
  EXPECT_EQ(lines(out), lines(src));
  EXPECT_NE(out.find("// (provided by the CPU emulation) #include <cuda_runtime.h>"),
            std::string::npos);
  EXPECT_NE(out.find("// (provided by the CPU emulation) #include \"cuda.h\""), std::string::npos);
  EXPECT_NE(out.find("\n#include <cstdio>\n"), std::string::npos);
}

TEST(cpu_program_source, shims_unpack_arguments_in_abi_order) {
  std::vector<kernel_arg> args(4);
  args[0].kind = arg_kind::i32;
  args[1].kind = arg_kind::i32_array;
  args[2].kind = arg_kind::input;
  args[3].kind = arg_kind::output;
  const std::string out =
      emulated_program_source("// header\n", "// program\n", {"first", "second"}, args);
  const std::string call =
      "(*static_cast<int*>(a[0]), static_cast<int*>(a[1]), static_cast<float*>(a[2]), "
      "static_cast<float*>(a[3]));";
  EXPECT_NE(out.find("void sparserl_emu_entry_0(void* const* a) {\n  first" + call),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("void sparserl_emu_entry_1(void* const* a) {\n  second" + call),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("#line 1 \"program.cu\"\n// program"), std::string::npos);
  EXPECT_EQ(out.find("SPARSERL_EMU_SHARED_UNPOISONED"), std::string::npos);
  EXPECT_NE(
      emulated_program_source("", "", {"k"}, args, false).find("SPARSERL_EMU_SHARED_UNPOISONED"),
      std::string::npos);
  EXPECT_THROW(emulated_program_source("", "", {"k(); evil"}, args), std::exception);
}

}  // namespace
}  // namespace sparserl
