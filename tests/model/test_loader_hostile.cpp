// config.json, safetensors headers and shard indexes built to break the loaders (after what the
// fuzz/ targets look for): nesting deep enough to overflow the stack of a recursive JSON parser,
// destructor or dump must be one clear error naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/hf_config.h"
#include "model/safetensors.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string nested_array(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

class loader_hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sparserl_hostile_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  template <typename F>
  std::string error_of(F&& load) {
    try {
      load();
    } catch (const error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(loader_hostile, config_json_nested_a_million_deep) {
  const std::string path = write(
      "config.json", R"({"model_type": "qwen3", "vocab_size": )" + nested_array(1000000) + "}");
  const std::string why = error_of([&] { load_qwen3_config(path); });
  EXPECT_THAT(why, HasSubstr(path));
  EXPECT_THAT(why, HasSubstr("JSON nested deeper than 128 levels"));
}

// Not deep enough to trouble the parser, but the error message dumps the value: bounded too.
TEST_F(loader_hostile, config_json_value_nested_below_the_limit_is_a_type_error) {
  const std::string path =
      write("config.json", R"({"model_type": "qwen3", "vocab_size": )" + nested_array(100) + "}");
  EXPECT_THAT(error_of([&] { load_qwen3_config(path); }),
              HasSubstr("\"vocab_size\" must be an integer"));
}

TEST_F(loader_hostile, safetensors_header_nested_a_million_deep) {
  const std::string header = R"({"__metadata__": )" + nested_array(1000000) + "}";
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  const std::string path = write("model.safetensors", file + header);
  const std::string why = error_of([&] { safetensors_file st(path); });
  EXPECT_THAT(why, HasSubstr(path));
  EXPECT_THAT(why, HasSubstr("JSON nested deeper than 128 levels"));
}

TEST_F(loader_hostile, shard_index_nested_a_million_deep) {
  write("model.safetensors.index.json", R"({"weight_map": )" + nested_array(1000000) + "}");
  const std::string why = error_of([&] { load_sharded(dir_.string()); });
  EXPECT_THAT(why, HasSubstr("model.safetensors.index.json"));
  EXPECT_THAT(why, HasSubstr("JSON nested deeper than 128 levels"));
}

}  // namespace
}  // namespace sparserl
