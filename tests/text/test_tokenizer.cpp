// The tokenizer against HF `tokenizers`: tests/text/fixtures/ holds two tokenizer.json files and
// the ids HF gave for a corpus of strings (tools/make_tokenizer_fixtures.py writes them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sparse/error.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"

namespace sparserl::text {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path fixtures = fs::path(SPARSERL_SOURCE_DIR) / "tests" / "text" / "fixtures";
const char* const files[] = {"tokenizer.json", "tokenizer_legacy.json"};

const nlohmann::json& expected() {
  static const nlohmann::json doc = [] {
    std::ifstream in(fixtures / "expected_ids.json");
    return nlohmann::json::parse(in);
  }();
  return doc;
}

std::vector<std::string> fixture_strings() {
  return expected()["strings"].get<std::vector<std::string>>();
}

std::vector<int32_t> ids_of(const char* file, const char* kind, size_t i) {
  return expected()["files"][file][kind][i].get<std::vector<int32_t>>();
}

nlohmann::json main_json() {
  std::ifstream in(fixtures / "tokenizer.json");
  return nlohmann::json::parse(in);
}

// A fresh directory under the build tree, removed at the end of the test.
struct temp_dir {
  fs::path path;
  explicit temp_dir(const std::string& name)
      : path(fs::path(SPARSERL_BINARY_DIR) / "test-tmp" / name) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
  }
};

class tokenizer_parity : public ::testing::TestWithParam<const char*> {};

TEST_P(tokenizer_parity, ids_match_hf_for_every_fixture_string) {
  const bpe_tokenizer tok = bpe_tokenizer::load(fixtures / GetParam());
  const auto strings = fixture_strings();
  ASSERT_GT(strings.size(), 30u);
  for (size_t i = 0; i < strings.size(); ++i) {
    EXPECT_EQ(tok.encode(strings[i], true), ids_of(GetParam(), "ids", i))
        << i << ": " << strings[i];
    EXPECT_EQ(tok.encode(strings[i], false), ids_of(GetParam(), "ids_no_special", i))
        << i << ": " << strings[i];
  }
}

TEST_P(tokenizer_parity, special_tokens_as_plain_text_match_hf) {
  bpe_tokenizer tok = bpe_tokenizer::load(fixtures / GetParam());
  tok.set_encode_special_tokens(true);
  const auto strings = fixture_strings();
  for (size_t i = 0; i < strings.size(); ++i)
    EXPECT_EQ(tok.encode(strings[i], false), ids_of(GetParam(), "ids_specials_as_text", i))
        << i << ": " << strings[i];
}

TEST_P(tokenizer_parity, decode_matches_hf) {
  const bpe_tokenizer tok = bpe_tokenizer::load(fixtures / GetParam());
  const auto& want = expected()["files"][GetParam()];
  for (size_t i = 0; i < fixture_strings().size(); ++i) {
    const auto ids = ids_of(GetParam(), "ids", i);
    EXPECT_EQ(tok.decode(ids, false), want["decoded"][i].get<std::string>()) << "string " << i;
    EXPECT_EQ(tok.decode(ids, true), want["decoded_skip_special"][i].get<std::string>())
        << "string " << i;
  }
}

TEST_P(tokenizer_parity, vocab_size_matches_hf) {
  const bpe_tokenizer tok = bpe_tokenizer::load(fixtures / GetParam());
  EXPECT_EQ(tok.vocab_size(), expected()["files"][GetParam()]["vocab_size"].get<size_t>());
}

TEST_P(tokenizer_parity, batch_equals_one_by_one) {
  const bpe_tokenizer tok = bpe_tokenizer::load(fixtures / GetParam());
  std::vector<std::string> texts = fixture_strings();
  for (int copy = 0; copy < 3; ++copy)  // enough work for every OpenMP thread
    texts.insert(texts.end(), texts.begin(), texts.begin() + 40);
  const auto batch = tok.encode_batch(texts, true);
  ASSERT_EQ(batch.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(batch[i], tok.encode(texts[i], true)) << i;
  const auto decoded = tok.decode_batch(batch);
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(decoded[i], tok.decode(batch[i])) << i;
}

INSTANTIATE_TEST_SUITE_P(fixtures, tokenizer_parity, ::testing::ValuesIn(files));

// The Qwen-style file has no flags that eat text, so decode(encode(s)) gives back NFC(s). (The
// legacy fixture's lstrip/rstrip and its non-ASCII added token make HF's decode lossy there.)
TEST(tokenizer, decode_of_encode_is_nfc_of_the_text) {
  const bpe_tokenizer tok = bpe_tokenizer::load(fixtures / "tokenizer.json");
  const auto strings = fixture_strings();
  for (size_t i = 0; i < strings.size(); ++i)
    EXPECT_EQ(tok.decode(tok.encode(strings[i])), expected()["nfc"][i].get<std::string>()) << i;
  // NFC really happens: the decomposed e + U+0301 comes back as the precomposed U+00E9.
  EXPECT_EQ(tok.decode(tok.encode("e\xCC\x81")), "\xC3\xA9");
}

TEST(tokenizer, fixture_uses_the_qwen2_pattern_the_trainer_writes) {
  EXPECT_EQ(main_json()["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"],
            std::string(qwen2_split_pattern));
}

TEST(tokenizer, special_tokens_are_single_ids_and_skippable) {
  const bpe_tokenizer tok = bpe_tokenizer::load(fixtures);  // the directory form
  const auto start = tok.token_to_id("<|im_start|>"), end = tok.token_to_id("<|im_end|>");
  ASSERT_TRUE(start && end);
  EXPECT_TRUE(tok.is_special(*start));
  EXPECT_EQ(tok.id_to_token(*end), "<|im_end|>");
  const auto ids = tok.encode("<|im_start|>user\nhi<|im_end|>");
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), *start);
  EXPECT_EQ(ids.back(), *end);
  EXPECT_EQ(tok.decode(ids, true), "user\nhi");
  EXPECT_EQ(tok.decode(ids, false), "<|im_start|>user\nhi<|im_end|>");
  // A special token split by the text is not one: "<|im_end" is ordinary text.
  for (const int32_t id : tok.encode("<|im_end")) EXPECT_FALSE(tok.is_special(id));
  EXPECT_FALSE(tok.is_special(tok.encode("a")[0]));
}

TEST(tokenizer, token_lookup_and_unknown_ids) {
  const bpe_tokenizer tok = bpe_tokenizer::load(fixtures / "tokenizer.json");
  for (int32_t id = 0; id < static_cast<int32_t>(tok.vocab_size()); ++id) {
    const auto token = tok.id_to_token(id);
    ASSERT_TRUE(token) << id;
    EXPECT_EQ(tok.token_to_id(*token), id);
  }
  EXPECT_FALSE(tok.id_to_token(static_cast<int32_t>(tok.vocab_size())));
  EXPECT_FALSE(tok.id_to_token(-1));
  EXPECT_FALSE(tok.token_to_id("no such token"));
  // Ids past the vocab (a model's padded embedding rows) are skipped, as HF does.
  auto ids = tok.encode("ab");
  ids.insert(ids.begin() + 1, {-5, 1 << 20});
  EXPECT_EQ(tok.decode(ids), "ab");
}

TEST(tokenizer, eos_and_pad_come_from_tokenizer_config_when_present) {
  const bpe_tokenizer plain = bpe_tokenizer::load(fixtures / "tokenizer.json");
  EXPECT_EQ(plain.eos_id(), plain.token_to_id("<|endoftext|>"));
  EXPECT_EQ(plain.pad_id(), plain.eos_id());
  EXPECT_FALSE(plain.bos_id());

  temp_dir dir("tokenizer_config");
  fs::copy_file(fixtures / "tokenizer.json", dir.path / "tokenizer.json");
  dir.write("tokenizer_config.json",
            R"({"eos_token": "<|im_end|>", "pad_token": {"content": "<|endoftext|>"},
                "bos_token": null, "unk_token": null})");
  const bpe_tokenizer tok = bpe_tokenizer::load(dir.path);
  EXPECT_EQ(tok.eos_id(), tok.token_to_id("<|im_end|>"));
  EXPECT_EQ(tok.pad_id(), tok.token_to_id("<|endoftext|>"));
  EXPECT_FALSE(tok.bos_id());

  dir.write("tokenizer_config.json", R"({"eos_token": "<|missing|>"})");
  try {
    (void)bpe_tokenizer::load(dir.path / "tokenizer.json");
    FAIL() << "a config naming a token the vocab lacks must be rejected";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("tokenizer_config.json"));
    EXPECT_THAT(e.what(), HasSubstr("<|missing|>"));
  }
}

TEST(tokenizer, invalid_utf8_input_is_an_error) {
  const bpe_tokenizer tok = bpe_tokenizer::load(fixtures / "tokenizer.json");
  try {
    (void)tok.encode(std::string("ok \xC3(", 5));
    FAIL() << "invalid UTF-8 must be rejected";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("offset 3"));
  }
  EXPECT_THROW((void)tok.encode_batch({"fine", "\xFF"}), error);
}

// Loads `doc` and returns the error message (empty when it loaded).
std::string load_error(const nlohmann::json& doc) {
  try {
    (void)bpe_tokenizer::from_json_text(doc.dump(), "bad.json");
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

TEST(tokenizer, bad_files_give_clear_errors) {
  nlohmann::json doc = main_json();
  ASSERT_EQ(load_error(doc), "");

  nlohmann::json no_model = doc;
  no_model.erase("model");
  EXPECT_THAT(load_error(no_model), HasSubstr("no \"model\""));

  nlohmann::json word_piece = doc;
  word_piece["model"]["type"] = "WordPiece";
  EXPECT_THAT(load_error(word_piece), HasSubstr("unsupported model type \"WordPiece\""));

  nlohmann::json three_parts = doc;
  three_parts["model"]["merges"][5] = "a b c";
  EXPECT_THAT(load_error(three_parts), HasSubstr("model.merges[5]"));

  nlohmann::json bad_pair = doc;
  bad_pair["model"]["merges"][2] = nlohmann::json::array({"a"});
  EXPECT_THAT(load_error(bad_pair), HasSubstr("model.merges[2]"));

  nlohmann::json unknown_token = doc;
  unknown_token["model"]["merges"][0] = nlohmann::json::array({"\xE2\x82\xAC", "x"});
  EXPECT_THAT(load_error(unknown_token), HasSubstr("not in the vocab"));

  nlohmann::json broken_regex = doc;
  broken_regex["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(\\p{L}+";
  EXPECT_THAT(load_error(broken_regex), HasSubstr("invalid regex"));

  nlohmann::json bad_behavior = doc;
  bad_behavior["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways";
  EXPECT_THAT(load_error(bad_behavior), HasSubstr("unknown behavior"));

  nlohmann::json metaspace = doc;
  metaspace["pre_tokenizer"] = {{"type", "Metaspace"}};
  EXPECT_THAT(load_error(metaspace), HasSubstr("unsupported type 'Metaspace'"));

  nlohmann::json lowercase = doc;
  lowercase["normalizer"] = {{"type", "Lowercase"}};
  EXPECT_THAT(load_error(lowercase), HasSubstr("normalizer: unsupported type 'Lowercase'"));

  nlohmann::json wordpiece_decoder = doc;
  wordpiece_decoder["decoder"] = {{"type", "WordPiece"}};
  EXPECT_THAT(load_error(wordpiece_decoder), HasSubstr("decoder: unsupported type"));

  nlohmann::json bad_id = doc;
  bad_id["model"]["vocab"]["!"] = "zero";
  EXPECT_THAT(load_error(bad_id), HasSubstr("not an integer"));

  nlohmann::json forged_id = doc;
  forged_id["model"]["vocab"]["!"] = 100000000;  // would need a huge id -> token table
  EXPECT_THAT(load_error(forged_id), HasSubstr("outside [0, "));

  for (const std::string& msg :
       {load_error(no_model), load_error(word_piece), load_error(broken_regex)})
    EXPECT_EQ(msg.rfind("bad.json: ", 0), 0u) << msg;  // every message names the file
}

TEST(tokenizer, unreadable_inputs_give_clear_errors) {
  EXPECT_THROW((void)bpe_tokenizer::from_json_text("{\"model\": ", "cut.json"), error);
  EXPECT_THROW((void)bpe_tokenizer::from_json_text("[1, 2]", "array.json"), error);
  try {
    (void)bpe_tokenizer::load(fixtures / "no-such-dir");
    FAIL() << "a missing path must be rejected";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no-such-dir"));
  }
}

}  // namespace
}  // namespace sparserl::text
