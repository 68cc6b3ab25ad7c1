// tokenizer.json files built to break the loader, found by fuzz/fuzz_tokenizer_json.cpp or made
// after what it found: each must be refused with one clear error, never crash or load into a
// tokenizer that hands out ids it does not have.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sparse/error.h"
#include "text/tokenizer.h"

namespace sparserl::text {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path fixtures = fs::path(SPARSERL_SOURCE_DIR) / "tests" / "text" / "fixtures";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string load_error(const std::string& json) {
  try {
    bpe_tokenizer::from_json_text(json, "hostile.json");
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

// The fuzzer's input: a small vocabulary whose added tokens HF renumbers from the vocabulary's
// size (320..), while TemplateProcessing still names <|im_start|> by its old id 2001. Loaded, every
// encode started with an id no token has (an embedding lookup out of range in the model).
TEST(tokenizer_hostile, post_processor_id_outside_the_vocabulary_is_refused) {
  const std::string json = read(fixtures / "fuzz_post_processor_unknown_id.json");
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(load_error(json),
            "hostile.json: post_processor: token id 2001 is not in the vocabulary");
}

TEST(tokenizer_hostile, bert_processing_ids_are_checked_too) {
  nlohmann::json doc = nlohmann::json::parse(read(fixtures / "tokenizer.json"));
  doc["post_processor"] = {
      {"type", "BertProcessing"}, {"cls", {"[CLS]", -1}}, {"sep", {"[SEP]", 0}}};
  EXPECT_THAT(load_error(doc.dump()), HasSubstr("token id -1 is not in the vocabulary"));
}

// A post_processor Sequence nested 100000 deep (3.5 MB) overflowed the stack: the loader recursed
// once per level, and nlohmann's parser and destructor do too. The depth limit stops the parse.
TEST(tokenizer_hostile, deeply_nested_components_are_refused_before_they_are_built) {
  nlohmann::json doc = nlohmann::json::parse(read(fixtures / "tokenizer.json"));
  doc["post_processor"] = "@nested@";
  const int depth = 100000;
  std::string nested;
  for (int i = 0; i < depth; ++i) nested += R"({"type":"Sequence","processors":[)";
  nested += R"({"type":"ByteLevel"})";
  for (int i = 0; i < depth; ++i) nested += "]}";
  std::string json = doc.dump();
  const std::string slot = "\"@nested@\"";
  json.replace(json.find(slot), slot.size(), nested);
  EXPECT_EQ(load_error(json), "hostile.json: JSON nested deeper than 128 levels");
  EXPECT_EQ(load_error(std::string(1000000, '[') + std::string(1000000, ']')),
            "hostile.json: JSON nested deeper than 128 levels");
}

TEST(tokenizer_hostile, real_files_are_far_below_the_depth_limit) {
  for (const char* f : {"tokenizer.json", "tokenizer_legacy.json"})
    EXPECT_NO_THROW(bpe_tokenizer::load(fixtures / f)) << f;
}

}  // namespace
}  // namespace sparserl::text
