// Decode throughput of generate() on a HF Qwen3 directory (SPARSERL_DECODE_MODEL; skipped when
// unset), greedy, a fixed number of new tokens (no EOS), at batch 1, 16 and 64, bf16 on a GPU when
// there is one, in two decode modes (model/decode_step.h): growing (eager) and automatic (CUDA
// graphs on a GPU with a CUDA build of LibTorch, else growing again). The prompts are the ones
// tools/decode_bench.py gives transformers' generate(): token (i * 7919 + j * 104729) % vocab at
// row i, column j, so both sides decode the same batch.
#include <benchmark/benchmark.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "model/generate.h"
#include "model/qwen3.h"

namespace {

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

const sparserl::qwen3_model* decode_model() {
  static std::unique_ptr<sparserl::qwen3_model> model;
  const char* dir = std::getenv("SPARSERL_DECODE_MODEL");
  if (!dir) return nullptr;
  if (!model) {
    const bool gpu = torch::cuda::is_available();
    model = std::make_unique<sparserl::qwen3_model>(sparserl::qwen3_model::load(
        dir, gpu ? torch::kBFloat16 : torch::kFloat32, gpu ? torch::kCUDA : torch::kCPU));
  }
  return model.get();
}

void sync() {
  if (torch::cuda::is_available()) torch::cuda::synchronize();
}

void bm_decode(benchmark::State& state) {
  const sparserl::qwen3_model* model = decode_model();
  if (!model) {
    state.SkipWithError("SPARSERL_DECODE_MODEL is not set");
    return;
  }
  const int64_t batch = state.range(0);
  const sparserl::decode_mode mode =
      state.range(1) == 0 ? sparserl::decode_mode::growing : sparserl::decode_mode::automatic;
  const int64_t prompt_len = env_int("SPARSERL_DECODE_PROMPT", 32);
  const int64_t vocab = model->config().vocab_size;
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t j = 0; j < prompt_len; ++j)
      prompts[static_cast<size_t>(i)].push_back(
          static_cast<int32_t>((i * 7919 + j * 104729) % vocab));
  sparserl::generate_options o;
  o.max_new_tokens = env_int("SPARSERL_DECODE_TOKENS", 128);
  o.sampling.temperature = 0;  // greedy, as the transformers side
  o.mode = mode;
  {  // warm-up: cuBLAS handles, allocator pools
    sparserl::generate_options w = o;
    w.max_new_tokens = 4;
    sparserl::generate(*model, prompts, w);
  }
  double seconds = 0;
  for (auto _ : state) {
    sync();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<sparserl::generation> out = sparserl::generate(*model, prompts, o);
    sync();
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(t);
    seconds += t;
    benchmark::DoNotOptimize(out);
  }
  state.counters["tokens_per_s"] =
      static_cast<double>(batch * o.max_new_tokens * state.iterations()) / seconds;
  state.counters["batch"] = static_cast<double>(batch);
  state.counters["cuda_graph"] =
      sparserl::resolve_decode_mode(mode, model->weights().embed_tokens.device()) ==
      sparserl::decode_mode::cuda_graph;
  state.SetLabel(sparserl::to_string(
      sparserl::resolve_decode_mode(mode, model->weights().embed_tokens.device())));
}

BENCHMARK(bm_decode)
    ->ArgsProduct({{1, 16, 64}, {0, 1}})
    ->ArgNames({"batch", "auto_mode"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
