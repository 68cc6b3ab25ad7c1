// Drives the real `sparserl tokenizer` binary (SPARSERL_CLI) through a shell, as a user would.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_testing.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::run_result;
using testing::slurp;

class TokenizerCli : public testing::cli_test {
 protected:
  void SetUp() override {
    cli_test::SetUp();
    // A small corpus: kernels with varied names, in nested folders.
    for (int f = 0; f < 6; ++f) {
      fs::create_directories(dir_ / "corpus" / ("d" + std::to_string(f % 3)));
      std::ofstream out(dir_ / "corpus" / ("d" + std::to_string(f % 3)) /
                        ("k" + std::to_string(f) + ".cu"));
      for (int k = 0; k < 40; ++k)
        out << "__global__ void spmv_" << f * 40 + k << "(const float* x, float* y, int n) {\n"
            << "  int row_" << k % 7 << " = blockIdx.x * blockDim.x + threadIdx.x;\n"
            << "  if (row_" << k % 7 << " < n) y[row] = " << k * 31 % 97 << ".5f * x[row];\n}\n";
    }
  }
};

TEST_F(TokenizerCli, TrainWritesAQwenStyleTokenizerThatEncodesAndDecodes) {
  const run_result r =
      run("tokenizer train --corpus " + path("corpus") + " --vocab 300 -o " + path("tok"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("6 files"));
  const nlohmann::json doc = nlohmann::json::parse(slurp(path("tok/tokenizer.json")));
  EXPECT_EQ(doc["model"]["type"], "BPE");
  EXPECT_EQ(doc["model"]["vocab"].size(), 297u);
  EXPECT_EQ(doc["model"]["merges"].size(), 297u - 256u);
  ASSERT_EQ(doc["added_tokens"].size(), 3u);
  EXPECT_EQ(doc["added_tokens"][0]["content"], "<|endoftext|>");
  EXPECT_EQ(doc["added_tokens"][2]["id"], 299);
  EXPECT_EQ(doc["pre_tokenizer"]["pretokenizers"][0]["type"], "Split");
  EXPECT_EQ(doc["decoder"]["type"], "ByteLevel");
  const nlohmann::json config = nlohmann::json::parse(slurp(path("tok/tokenizer_config.json")));
  EXPECT_EQ(config["eos_token"], "<|endoftext|>");

  const std::string text = "__global__ void spmv_3(const float* x) {}<|im_end|>";
  const run_result enc = run("tokenizer encode -t " + path("tok") + " '" + text + "'");
  ASSERT_EQ(enc.code, 0) << enc.err;
  ASSERT_GT(enc.out.size(), 5u);
  const std::string ids = enc.out.substr(0, enc.out.size() - 1);  // without the newline
  EXPECT_EQ(ids.substr(ids.size() - 4), " 299");                  // <|im_end|> is the last id
  const run_result dec = run("tokenizer decode -t " + path("tok") + " " + ids);
  ASSERT_EQ(dec.code, 0) << dec.err;
  EXPECT_EQ(dec.out, text + "\n");
}

TEST_F(TokenizerCli, BadInputsAreOneLineErrors) {
  expect_one_line_error("tokenizer train --corpus " + path("nope") + " -o " + path("t"), "nope");
  expect_one_line_error(
      "tokenizer train --corpus " + path("corpus") + " --vocab 100 -o " + path("t"),
      "vocab size 100");
  expect_one_line_error("tokenizer encode -t " + path("missing") + " hello", "missing");
}

}  // namespace
}  // namespace sparserl
