// The load-time screen over real objects built by g++, and over broken bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "eval/elf_screen.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;

std::vector<char> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

// Builds `source` as the CPU runner does (shared, no start files) and returns the image.
std::vector<char> build(const std::string& source) {
  const fs::path dir =
      fs::temp_directory_path() / ("sparserl-elf-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.cpp") << source;
  const std::string cmd = "g++ -std=c++17 -O1 -w -fPIC -shared -nostartfiles -o " +
                          (dir / "a.so").string() + " " + (dir / "a.cpp").string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<char> image = read_bytes(dir / "a.so");
  fs::remove_all(dir);
  return image;
}

TEST(elf_screen, plain_device_code_passes) {
  EXPECT_EQ(screen_shared_object(
                build("#include <cmath>\nextern \"C\" void k(float* y) { y[0] = sqrtf(y[1]); }")),
            "");
}

TEST(elf_screen, code_that_would_run_at_load_time_is_rejected) {
  EXPECT_EQ(screen_shared_object(build("#include <cstdlib>\nstatic int x = std::system(\"true\");\n"
                                       "extern \"C\" int k() { return x; }")),
            "runs code at load time (DT_INIT_ARRAY: static initialisers)");
  EXPECT_EQ(screen_shared_object(build(
                "#include <unistd.h>\n__attribute__((constructor)) static void c() { fork(); }")),
            "runs code at load time (DT_INIT_ARRAY: static initialisers)");
  EXPECT_EQ(
      screen_shared_object(build("#include <unistd.h>\nextern \"C\" void _init() { fork(); }")),
      "runs code at load time (DT_INIT)");
  EXPECT_NE(screen_shared_object(build("static int impl() { return 1; }\n"
                                       "extern \"C\" int (*resolve())() { return impl; }\n"
                                       "extern \"C\" int f() __attribute__((ifunc(\"resolve\")));\n"
                                       "extern \"C\" int g() { return f(); }"))
                .find("ifunc"),
            std::string::npos);
}

TEST(elf_screen, executables_and_garbage_are_rejected_without_overruns) {
  EXPECT_EQ(screen_shared_object({}), "not an ELF file");
  EXPECT_EQ(screen_shared_object(read_bytes("/bin/sh")), "has a program interpreter");
  const std::vector<char> good = build("extern \"C\" int k(int a) { return a + 1; }");
  ASSERT_EQ(screen_shared_object(good), "");
  for (size_t n = 0; n < good.size(); n += 331) {  // every truncation, then corrupted headers
    const std::vector<char> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    screen_shared_object(cut);
  }
  std::mt19937 rng(3);
  for (int i = 0; i < 200; ++i) {
    std::vector<char> bad = good;
    for (int j = 0; j < 8; ++j) bad[rng() % 256] = static_cast<char>(rng());
    screen_shared_object(bad);  // any verdict, but within bounds (ASan builds check)
  }
}

}  // namespace
}  // namespace sparserl
