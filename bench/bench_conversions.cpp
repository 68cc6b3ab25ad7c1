// CSR -> each storage format: conversion rate in nonzeros per second (items/s).
// The matrix is random with ~5M nonzeros (SPARSERL_BENCH_NNZ overrides), row lengths uniform in
// [mean / 2, 3 mean / 2] with mean 16. DIA would refuse such a matrix (one diagonal per distinct
// col - row), so it is measured on a banded matrix of the same size instead.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "sparse/csr_matrix.h"
#include "sparse/error.h"
#include "sparse/formats.h"

namespace sparserl {
namespace {

constexpr int64_t default_nnz = 5'000'000;
constexpr int32_t mean_row_length = 16;

int64_t target_nnz() {
  const char* text = std::getenv("SPARSERL_BENCH_NNZ");
  if (text == nullptr || *text == '\0') return default_nnz;
  char* end = nullptr;
  const long long n = std::strtoll(text, &end, 10);
  if (*end != '\0' || n < mean_row_length || n > INT32_MAX)
    throw error(std::string("SPARSERL_BENCH_NNZ = '") + text + "' is not an integer in [" +
                std::to_string(mean_row_length) + ", 2^31)");
  return n;
}

csr_matrix random_matrix(int64_t nnz) {
  const auto rows = static_cast<int32_t>(nnz / mean_row_length);
  std::mt19937_64 rng(2024);
  std::uniform_int_distribution<int32_t> len(mean_row_length / 2, 3 * mean_row_length / 2);
  std::uniform_int_distribution<int32_t> col(0, rows - 1);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<triplet> entries;
  entries.reserve(static_cast<size_t>(nnz) * 11 / 10);
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t k = len(rng); k > 0; --k) entries.push_back({r, col(rng), value(rng)});
  return csr_from_triplets(rows, rows, std::move(entries));
}

// `mean_row_length` full diagonals around the main one (a stencil-like band).
csr_matrix banded_matrix(int64_t nnz) {
  const auto rows = static_cast<int32_t>(nnz / mean_row_length);
  std::mt19937_64 rng(2025);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<triplet> entries;
  entries.reserve(static_cast<size_t>(nnz));
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t d = -mean_row_length / 2; d < mean_row_length / 2; ++d)
      if (r + 3 * d >= 0 && r + 3 * d < rows) entries.push_back({r, r + 3 * d, value(rng)});
  return csr_from_triplets(rows, rows, std::move(entries));
}

const csr_matrix& random_input() {
  static const csr_matrix a = random_matrix(target_nnz());
  return a;
}
const csr_matrix& banded_input() {
  static const csr_matrix a = banded_matrix(target_nnz());
  return a;
}

// Times `convert(a)`; a bad SPARSERL_BENCH_NNZ skips with the reason instead of aborting.
template <typename Convert>
void run(benchmark::State& state, const csr_matrix& (*input)(), Convert convert) {
  const csr_matrix* a = nullptr;
  try {
    a = &input();
  } catch (const error& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    auto out = convert(*a);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * a->nnz());
  state.counters["nnz"] = static_cast<double>(a->nnz());
}

void bm_validate_csr(benchmark::State& s) {  // the input check every conversion starts with
  run(s, random_input, [](const csr_matrix& a) {
    validate_csr(a);
    return a.rows;
  });
}
void bm_to_coo(benchmark::State& s) {
  run(s, random_input, [](auto& a) { return to_coo(a); });
}
void bm_to_ell(benchmark::State& s) {
  run(s, random_input, [](auto& a) { return to_ell(a); });
}
void bm_to_sell(benchmark::State& s) {
  const auto C = static_cast<int32_t>(s.range(0)), sigma = static_cast<int32_t>(s.range(1));
  run(s, random_input, [=](auto& a) { return to_sell(a, C, sigma); });
}
void bm_to_bsr(benchmark::State& s) {
  const auto r = static_cast<int32_t>(s.range(0));
  run(s, random_input, [=](auto& a) { return to_bsr(a, r, r); });
}
void bm_to_hyb(benchmark::State& s) {
  const auto width = static_cast<int32_t>(s.range(0));
  run(s, random_input, [=](auto& a) { return to_hyb(a, width); });
}
void bm_to_dia_banded(benchmark::State& s) {
  run(s, banded_input, [](auto& a) { return to_dia(a); });
}

BENCHMARK(bm_validate_csr)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_to_coo)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_to_ell)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_to_sell)
    ->ArgNames({"C", "sigma"})
    ->Args({32, 1})
    ->Args({32, 256})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(bm_to_bsr)->ArgName("r=c")->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_to_hyb)->ArgName("width")->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_to_dia_banded)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sparserl

BENCHMARK_MAIN();
