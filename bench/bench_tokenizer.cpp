// Tokenizer throughput on ~10 MB of CUDA headers (/usr/local/cuda/include): encode (one thread,
// warm and cold word cache), encode_batch (OpenMP), decode, and BPE training. The tokenizer is
// one trained here on those headers (vocab 8192, Qwen2's pipeline), or the tokenizer.json that
// $SPARSERL_TOKENIZER names (e.g. a real Qwen3 checkpoint directory).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sparse/gzip_file.h"
#include "text/bpe_trainer.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace {

namespace fs = std::filesystem;
using sparserl::text::bpe_tokenizer;

constexpr size_t corpus_bytes = size_t{10} << 20;

const std::vector<std::string>& headers() {
  static const std::vector<std::string> files = [] {
    std::vector<fs::path> paths;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator("/usr/local/cuda/include", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string ext = it->path().extension().string();
      if (it->is_regular_file() && (ext == ".h" || ext == ".hpp" || ext == ".cuh"))
        paths.push_back(it->path());
    }
    std::sort(paths.begin(), paths.end());
    std::vector<std::string> out;
    size_t total = 0;
    for (const fs::path& p : paths) {
      if (total >= corpus_bytes) break;
      out.push_back(sparserl::text::to_valid_utf8(sparserl::read_file_decompressed(p, 1 << 30)));
      total += out.back().size();
    }
    return out;
  }();
  return files;
}

int64_t total_bytes() {
  int64_t n = 0;
  for (const std::string& s : headers()) n += static_cast<int64_t>(s.size());
  return n;
}

fs::path tokenizer_path() {
  if (const char* env = std::getenv("SPARSERL_TOKENIZER")) return env;
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / "sparserl-bench-tokenizer";
    sparserl::text::bpe_trainer trainer(sparserl::text::bpe_trainer_options{});
    for (const std::string& s : headers()) trainer.add_text(s);
    trainer.save(trainer.train(), d);
    return d;
  }();
  return dir;
}

const bpe_tokenizer& tokenizer() {
  static const bpe_tokenizer tok = bpe_tokenizer::load(tokenizer_path());
  return tok;
}

bool have_corpus(benchmark::State& state) {
  if (!headers().empty()) return true;
  state.SkipWithError("no CUDA headers under /usr/local/cuda/include");
  return false;
}

void BM_encode(benchmark::State& state) {
  if (!have_corpus(state)) return;
  const bpe_tokenizer& tok = tokenizer();
  int64_t tokens = 0;
  for (auto _ : state) {
    tokens = 0;
    for (const std::string& s : headers()) tokens += static_cast<int64_t>(tok.encode(s).size());
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(state.iterations() * total_bytes());
  state.counters["bytes_per_token"] =
      static_cast<double>(total_bytes()) / static_cast<double>(tokens);
}
BENCHMARK(BM_encode)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// A freshly loaded tokenizer per iteration: every word's BPE runs at least once.
void BM_encode_cold_cache(benchmark::State& state) {
  if (!have_corpus(state)) return;
  tokenizer();  // train / load outside the timing
  for (auto _ : state) {
    state.PauseTiming();
    auto tok = std::make_unique<bpe_tokenizer>(bpe_tokenizer::load(tokenizer_path()));
    state.ResumeTiming();
    for (const std::string& s : headers()) benchmark::DoNotOptimize(tok->encode(s));
    state.PauseTiming();
    tok.reset();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * total_bytes());
}
BENCHMARK(BM_encode_cold_cache)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_encode_batch(benchmark::State& state) {
  if (!have_corpus(state)) return;
  const bpe_tokenizer& tok = tokenizer();
  for (auto _ : state) benchmark::DoNotOptimize(tok.encode_batch(headers()));
  state.SetBytesProcessed(state.iterations() * total_bytes());
}
BENCHMARK(BM_encode_batch)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();

void BM_decode(benchmark::State& state) {
  if (!have_corpus(state)) return;
  const bpe_tokenizer& tok = tokenizer();
  const auto ids = tok.encode_batch(headers());
  for (auto _ : state)
    for (const auto& one : ids) benchmark::DoNotOptimize(tok.decode(one));
  state.SetBytesProcessed(state.iterations() * total_bytes());
}
BENCHMARK(BM_decode)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_train_8192(benchmark::State& state) {
  if (!have_corpus(state)) return;
  for (auto _ : state) {
    sparserl::text::bpe_trainer trainer(sparserl::text::bpe_trainer_options{});
    for (const std::string& s : headers()) trainer.add_text(s);
    benchmark::DoNotOptimize(trainer.train());
  }
  state.SetBytesProcessed(state.iterations() * total_bytes());
}
BENCHMARK(BM_train_8192)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
BENCHMARK_MAIN();
