// bpe_trainer on a generated corpus: the file it writes loads in bpe_tokenizer and round-trips,
// the merges follow the BPE rule, and (when python3 has `tokenizers`, see
// tools/hf_tokenizer_check.py) HF loads the file to the same ids and trains the same merges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "sparse/error.h"
#include "text/bpe_trainer.h"
#include "text/tokenizer.h"

namespace sparserl::text {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct temp_dir {
  fs::path path;
  explicit temp_dir(const std::string& name)
      : path(fs::path(SPARSERL_BINARY_DIR) / "test-tmp" / name) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() { fs::remove_all(path); }
  void write(const fs::path& name, const std::string& text) const {
    fs::create_directories((path / name).parent_path());
    std::ofstream(path / name, std::ios::binary) << text;
  }
};

// CUDA-like kernels with varied names and constants, prose, and a little unicode.
std::string generated_kernel(std::mt19937& rng, int k) {
  const char* types[] = {"float", "double", "int", "half"};
  const char* names[] = {"row", "col", "val", "acc", "sum", "tid", "lane", "warp"};
  auto pick = [&](auto& list) { return list[rng() % (sizeof(list) / sizeof(list[0]))]; };
  std::string s = "__global__ void kernel_" + std::to_string(k) + "(const " + pick(types) +
                  "* __restrict__ x, " + pick(types) + "* y, int n) {\n";
  for (int line = 0; line < 6; ++line) {
    const std::string a = pick(names), b = pick(names);
    s += "  int " + a + std::to_string(line) + " = blockIdx.x * blockDim.x + threadIdx.x;\n";
    s += "  if (" + a + std::to_string(line) + " < n) y[" + b + "] += x[" + a + "] * " +
         std::to_string(rng() % 1000) + ".0f;\n";
  }
  s += "}\n//";
  // Made-up words of 1-4 syllables: enough distinct pairs to fill a vocab of a thousand.
  const char* syllables[] = {"ka",  "ter", "no", "mis",  "pal", "ro", "ven", "dus", "li", "qua",
                             "sor", "bel", "ti", "grun", "ex",  "ho", "zan", "pe",  "ul", "wid"};
  for (int w = 0; w < 12; ++w) {
    s += ' ';
    for (unsigned n = 1 + rng() % 4; n > 0; --n) s += pick(syllables);
  }
  return s + ".\n";
}

std::string unicode_lines() {
  return "Größe der Matrix: dünn besetzt. 稀疏矩阵的内核。 Разреженная матрица. 🚀 done\n";
}

temp_dir make_corpus(const std::string& name) {
  temp_dir dir(name);
  std::mt19937 rng(12345);
  for (int f = 0; f < 12; ++f) {
    std::string text;
    for (int k = 0; k < 25; ++k) text += generated_kernel(rng, f * 100 + k);
    text += unicode_lines();
    dir.write(fs::path(f % 2 ? "sub/deeper" : "top") / ("file" + std::to_string(f) + ".cu"), text);
  }
  dir.write(".git/objects/blob", std::string(5000, 'Q'));  // hidden: must not be learned
  dir.write("data.bin", std::string("\x01\x00\x02\x00QQQQQQQQ", 12));  // binary: skipped
  return dir;
}

std::vector<std::string> probe_strings() {
  return {"__global__ void kernel_7(const float* __restrict__ x, float* y, int n) {\n",
          "  if (lane3 < n) y[warp] += x[lane] * 42.0f;\n",
          "never seen: ZYXW qqq 12345 \t\t tabs\r\n",
          unicode_lines(),
          "<|im_start|>user\nwrite a kernel<|im_end|>\n<|endoftext|>",
          "ǅ ﬁ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 e\xCC\x81",
          ""};
}

bpe_trainer_options small_options(int32_t vocab) {
  bpe_trainer_options o;
  o.vocab_size = vocab;
  o.min_frequency = 2;
  return o;
}

bool hf_available() {
  static const bool ok = std::system("python3 -c 'import tokenizers' >/dev/null 2>&1") == 0;
  return ok;
}

nlohmann::json run_hf(const temp_dir& dir, const nlohmann::json& request) {
  const fs::path req = dir.path / "request.json", resp = dir.path / "response.json";
  std::ofstream(req) << request.dump();
  const fs::path script = fs::path(SPARSERL_SOURCE_DIR) / "tools" / "hf_tokenizer_check.py";
  const std::string cmd =
      "python3 '" + script.string() + "' '" + req.string() + "' '" + resp.string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(resp);
  return nlohmann::json::parse(in);
}

TEST(bpe_trainer, merges_follow_pair_frequency_with_hf_tie_break) {
  bpe_trainer trainer(small_options(256 + 3 + 3));
  trainer.add_text("hug hug hug pug pun bun");
  const trained_bpe bpe = trainer.train();
  // Words: hug x1, Ġhug x2, Ġpug, Ġpun, Ġbun. (u,g) has 4; then (h,ug) 3; then the count-2 tie
  // (Ġ,hug) / (Ġ,p) / (u,n) goes to the smallest ids: 'u' and 'n' are below 'Ġ' (U+0120).
  ASSERT_EQ(bpe.merges.size(), 3u);
  EXPECT_EQ(bpe.merges[0], std::make_pair(std::string("u"), std::string("g")));
  EXPECT_EQ(bpe.merges[1], std::make_pair(std::string("h"), std::string("ug")));
  EXPECT_EQ(bpe.merges[2], std::make_pair(std::string("u"), std::string("n")));
  EXPECT_EQ(bpe.vocab.size(), 256u + 3u);
  EXPECT_EQ(bpe.vocab.back(), "un");
}

TEST(bpe_trainer, written_file_loads_round_trips_and_compresses) {
  const temp_dir corpus = make_corpus("trainer_corpus");
  bpe_trainer trainer(small_options(1000));
  const corpus_stats stats = trainer.add_directory(corpus.path);
  EXPECT_EQ(stats.files, 12u);
  EXPECT_EQ(stats.skipped_files, 1u);  // data.bin; .git is not even listed
  const trained_bpe bpe = trainer.train();
  EXPECT_EQ(bpe.vocab.size(), 1000u - 3u);
  EXPECT_EQ(bpe.merges.size(), bpe.vocab.size() - 256u);
  for (const auto& [a, b] : bpe.merges) EXPECT_EQ(a.find("QQ"), std::string::npos);

  const temp_dir out("trainer_out");
  trainer.save(bpe, out.path / "tok");
  const bpe_tokenizer tok = bpe_tokenizer::load(out.path / "tok");
  EXPECT_EQ(tok.vocab_size(), 1000u);
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), 997);
  EXPECT_EQ(tok.token_to_id("<|im_end|>"), 999);
  EXPECT_EQ(tok.eos_id(), 997);
  for (const std::string& s : probe_strings()) {
    if (s.find("e\xCC\x81") == std::string::npos) {
      EXPECT_EQ(tok.decode(tok.encode(s)), s);
    }
  }
  EXPECT_EQ(tok.decode(tok.encode("e\xCC\x81")), "\xC3\xA9");  // NFC is in the written file
  const auto ids = tok.encode("<|im_start|>x<|im_end|>");
  EXPECT_EQ(ids.front(), 998);
  EXPECT_EQ(ids.back(), 999);
  // Learned merges pay off on text like the corpus: well under one token per 2 bytes.
  const std::string kernel = probe_strings()[0] + probe_strings()[1];
  EXPECT_LT(tok.encode(kernel).size() * 2, kernel.size());
  // No stray temp files beside the outputs.
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(out.path / "tok")) entries += e.is_regular_file();
  EXPECT_EQ(entries, 2u);
}

TEST(bpe_trainer, hf_loads_the_file_to_the_same_ids_and_trains_the_same_merges) {
  if (!hf_available())
    GTEST_SKIP() << "python3 with `tokenizers` not found (pip install tokenizers)";
  const temp_dir corpus = make_corpus("trainer_hf_corpus");
  bpe_trainer trainer(small_options(800));
  trainer.add_directory(corpus.path);
  const trained_bpe bpe = trainer.train();
  const temp_dir out("trainer_hf_out");
  trainer.save(bpe, out.path);
  const bpe_tokenizer tok = bpe_tokenizer::load(out.path);

  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(corpus.path))
    if (e.is_regular_file() && e.path().extension() == ".cu") files.push_back(e.path().string());
  const auto strings = probe_strings();
  const nlohmann::json hf = run_hf(out, {{"tokenizer", (out.path / "tokenizer.json").string()},
                                         {"strings", strings},
                                         {"train",
                                          {{"files", files},
                                           {"vocab_size", 800 - 3},
                                           {"min_frequency", 2},
                                           {"pattern", qwen2_split_pattern}}}});
  ASSERT_TRUE(hf.contains("ids"));
  EXPECT_EQ(hf["vocab_size"].get<size_t>(), tok.vocab_size());
  for (size_t i = 0; i < strings.size(); ++i) {
    EXPECT_EQ(tok.encode(strings[i]), hf["ids"][i].get<std::vector<int32_t>>()) << strings[i];
    EXPECT_EQ(tok.decode(tok.encode(strings[i])), hf["decoded"][i].get<std::string>());
  }
  const auto hf_merges = hf["merges"].get<std::vector<std::pair<std::string, std::string>>>();
  ASSERT_EQ(hf_merges.size(), bpe.merges.size());
  for (size_t i = 0; i < hf_merges.size(); ++i)
    EXPECT_EQ(bpe.merges[i], hf_merges[i]) << "merge " << i;
}

TEST(bpe_trainer, bad_settings_and_inputs_are_errors) {
  EXPECT_THROW(bpe_trainer(small_options(100)), error);  // below 256 bytes + specials
  bpe_trainer_options repeated = small_options(400);
  repeated.special_tokens = {"<a>", "<a>"};
  repeated.eos_token = "<a>";
  EXPECT_THROW((bpe_trainer(repeated)), error);
  bpe_trainer_options bad_eos = small_options(400);
  bad_eos.eos_token = "</s>";
  EXPECT_THROW((bpe_trainer(bad_eos)), error);
  bpe_trainer_options bad_regex = small_options(400);
  bad_regex.pattern = "[a-";
  EXPECT_THROW((bpe_trainer(bad_regex)), error);

  bpe_trainer trainer(small_options(400));
  EXPECT_THROW((void)trainer.train(), error);  // nothing to learn from
  try {
    trainer.add_directory("/no/such/corpus");
    FAIL() << "a missing corpus must be rejected";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/no/such/corpus"));
  }
  trainer.add_text(std::string("bad \xFF utf8 \xC3", 12));  // replaced, not fatal
  EXPECT_GT(trainer.distinct_words(), 0u);
}

}  // namespace
}  // namespace sparserl::text
