// `sparserl tokenizer train | encode | decode`: learn a byte-level BPE from a corpus directory
// into a HF-loadable tokenizer.json, and run a tokenizer.json on text.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "text/bpe_trainer.h"
#include "text/tokenizer.h"

namespace sparserl::cli {

namespace {

struct train_options {
  std::string corpus;
  std::string output;
  text::bpe_trainer_options trainer;
  bool no_nfc = false;
  bool eos_given = false;
};

void run_train(const train_options& o) {
  const auto start = std::chrono::steady_clock::now();
  text::bpe_trainer_options settings = o.trainer;
  settings.nfc = !o.no_nfc;
  // Without --eos, the default eos follows --special: "<|endoftext|>" if listed, else the first.
  const auto& specials = settings.special_tokens;
  if (!o.eos_given &&
      std::find(specials.begin(), specials.end(), settings.eos_token) == specials.end())
    settings.eos_token = specials.empty() ? "" : specials.front();
  text::bpe_trainer trainer(settings);
  const text::corpus_stats stats = trainer.add_directory(o.corpus);
  std::printf("corpus      %zu files, %zu bytes (%zu skipped), %zu distinct words\n", stats.files,
              stats.bytes, stats.skipped_files, trainer.distinct_words());
  const text::trained_bpe bpe = trainer.train();
  trainer.save(bpe, o.output);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "vocab       %zu tokens (%zu merges + 256 bytes + %zu special)%s\n",
      bpe.vocab.size() + settings.special_tokens.size(), bpe.merges.size(),
      settings.special_tokens.size(),
      static_cast<int64_t>(bpe.vocab.size() + settings.special_tokens.size()) < settings.vocab_size
          ? ": the corpus ran out of pairs seen min-frequency times"
          : "");
  std::printf("wrote       %s/tokenizer.json, tokenizer_config.json in %.1f s\n", o.output.c_str(),
              seconds);
}

struct encode_options {
  std::string tokenizer;
  std::string text;
  std::string file;
  bool no_special = false;
};

void run_encode(const encode_options& o) {
  if (o.text.empty() == o.file.empty())
    throw error("tokenizer encode: give a TEXT or --file, not both");
  const text::bpe_tokenizer tok = text::bpe_tokenizer::load(o.tokenizer);
  const std::string input =
      o.file.empty() ? o.text : read_file_decompressed(o.file, size_t{1} << 30);
  const std::vector<int32_t> ids = tok.encode(input, !o.no_special);
  for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
  std::printf("\n");
}

struct decode_options {
  std::string tokenizer;
  std::vector<int32_t> ids;
  bool skip_special = false;
};

void run_decode(const decode_options& o) {
  const text::bpe_tokenizer tok = text::bpe_tokenizer::load(o.tokenizer);
  std::printf("%s\n", tok.decode(o.ids, o.skip_special).c_str());
}

}  // namespace

void add_tokenizer_command(CLI::App& app) {
  CLI::App& cmd = *app.add_subcommand("tokenizer", "Train or run a byte-level BPE tokenizer");
  cmd.require_subcommand(1);

  auto t = std::make_shared<train_options>();
  CLI::App* train = cmd.add_subcommand(
      "train", "Learn a byte-level BPE (Qwen2-style tokenizer.json) from a corpus directory");
  train->add_option("--corpus", t->corpus, "Directory of text files, read recursively")->required();
  train->add_option("--vocab", t->trainer.vocab_size, "Vocabulary size, special tokens included")
      ->capture_default_str();
  train->add_option("-o,--output", t->output, "Output directory")->required();
  train
      ->add_option("--min-frequency", t->trainer.min_frequency,
                   "Pairs seen fewer times are not merged")
      ->capture_default_str();
  train->add_option("--special", t->trainer.special_tokens,
                    "Special tokens, ids after the vocab (default: Qwen's three)");
  CLI::Option* eos =
      train->add_option("--eos", t->trainer.eos_token, "End-of-sequence (and pad) token")
          ->capture_default_str();
  train->add_option("--pattern", t->trainer.pattern, "Pre-tokenizer split regex (default Qwen2's)");
  train->add_flag("--no-nfc", t->no_nfc, "Do not NFC-normalize the text");
  train->callback([t, eos] {
    t->eos_given = eos->count() > 0;
    run_train(*t);
  });

  auto e = std::make_shared<encode_options>();
  CLI::App* encode = cmd.add_subcommand("encode", "Print the ids of a text");
  encode->add_option("-t,--tokenizer", e->tokenizer, "tokenizer.json or its directory")->required();
  encode->add_option("text", e->text, "The text");
  encode->add_option("--file", e->file, "Read the text from a file instead");
  encode->add_flag("--no-special", e->no_special, "Do not add the post-processor's tokens");
  encode->callback([e] { run_encode(*e); });

  auto d = std::make_shared<decode_options>();
  CLI::App* decode = cmd.add_subcommand("decode", "Print the text of ids");
  decode->add_option("-t,--tokenizer", d->tokenizer, "tokenizer.json or its directory")->required();
  decode->add_option("ids", d->ids, "Token ids")->required();
  decode->add_flag("--skip-special", d->skip_special, "Leave special tokens out");
  decode->callback([d] { run_decode(*d); });
}

}  // namespace sparserl::cli
