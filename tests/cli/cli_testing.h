#pragma once
// What every CLI test shares: a fresh temp directory and a runner for the real `sparserl` binary
// (SPARSERL_CLI) through a shell, as a user would run it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sparserl::testing {

namespace fs = std::filesystem;

struct run_result {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class cli_test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sparserl-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  run_result run(const std::string& args) const {
    const std::string out = path("stdout"), err = path("stderr");
    const std::string command =
        std::string(SPARSERL_CLI) + " " + args + " >" + out + " 2>" + err + " </dev/null";
    const int status = std::system(command.c_str());
    run_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  // Expects exit code `code` with exactly one line on stderr mentioning `part`.
  void expect_one_line_error(const std::string& args, const std::string& part, int code = 1) const {
    SCOPED_TRACE(args);
    const run_result r = run(args);
    EXPECT_EQ(r.code, code);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, ::testing::HasSubstr(part));
  }

  fs::path dir_;
};

}  // namespace sparserl::testing
