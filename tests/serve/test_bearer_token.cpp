// The bearer token: read from a file (one line, trailing newline dropped) and checked exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "serve/bearer_token.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(bearer_check, no_token_allows_everything) {
  const bearer_check open;
  EXPECT_FALSE(open.required());
  EXPECT_TRUE(open.allows(""));
  EXPECT_TRUE(open.allows("Bearer anything"));
}

TEST(bearer_check, only_the_exact_token_passes) {
  const bearer_check check("s3cret-token");
  EXPECT_TRUE(check.required());
  EXPECT_TRUE(check.allows("Bearer s3cret-token"));
  EXPECT_FALSE(check.allows(""));
  EXPECT_FALSE(check.allows("s3cret-token"));          // no scheme
  EXPECT_FALSE(check.allows("Basic s3cret-token"));    // another scheme
  EXPECT_FALSE(check.allows("Bearer s3cret-toke"));    // a prefix
  EXPECT_FALSE(check.allows("Bearer s3cret-token2"));  // longer
  EXPECT_FALSE(check.allows("Bearer S3CRET-TOKEN"));   // case matters
}

class token_file : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sparserl-token-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& content) {
    const std::string path = (dir_ / "token").string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  fs::path dir_;
};

TEST_F(token_file, trailing_newline_is_dropped) {
  EXPECT_EQ(read_token_file(write("abc123\n")), "abc123");
}

TEST_F(token_file, empty_missing_or_multiline_files_are_errors) {
  auto message = [](const std::string& path) {
    try {
      read_token_file(path);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message(write("\n")), HasSubstr("is empty"));
  EXPECT_THAT(message(write("a\nb\n")), HasSubstr("one line"));
  EXPECT_THAT(message((dir_ / "none").string()), HasSubstr("cannot open"));
}

}  // namespace
}  // namespace sparserl
