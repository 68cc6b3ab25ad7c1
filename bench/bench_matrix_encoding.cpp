// encode_matrix on a generated R-MAT matrix with ~10^7 nonzeros (SPARSERL_BENCH_ROWS rows, default
// 2^20 at 10 nonzeros per row on average): the full encoding (compute_features' pass over the
// nonzeros included) and the encoding from precomputed features (the sampling alone).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "model/matrix_encoding.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

int32_t bench_rows() {
  const char* text = std::getenv("SPARSERL_BENCH_ROWS");
  if (text == nullptr || *text == '\0') return 1 << 20;
  char* end = nullptr;
  const long long n = std::strtoll(text, &end, 10);
  if (*end != '\0' || n < 1024 || n > (1 << 26))
    throw error(std::string("SPARSERL_BENCH_ROWS = '") + text +
                "' is not an integer in [1024, 2^26]");
  return static_cast<int32_t>(n);
}

const csr_matrix& input() {
  static const csr_matrix a = [] {
    generator_spec spec;
    spec.family = "rmat";
    spec.rows = bench_rows();
    spec.avg_degree = 10;
    spec.seed = 11;
    return generate_matrix(spec);
  }();
  return a;
}

template <typename Encode>
void run(benchmark::State& state, Encode encode) {
  const csr_matrix* a = nullptr;
  try {
    a = &input();
  } catch (const error& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    matrix_encoding e = encode(*a);
    benchmark::DoNotOptimize(e.features.data());
  }
  state.counters["nnz"] = static_cast<double>(a->nnz());
  state.counters["rows"] = a->rows;
}

void encode_full(benchmark::State& state) {
  run(state, [](const csr_matrix& a) { return encode_matrix(a, matrix_encoding_options{}); });
}

void encode_precomputed_features(benchmark::State& state) {
  const matrix_features* f = nullptr;
  try {
    static const matrix_features features = compute_features(input());
    f = &features;
  } catch (const error& e) {
    state.SkipWithError(e.what());
    return;
  }
  run(state, [f](const csr_matrix& a) { return encode_matrix(a, *f, matrix_encoding_options{}); });
}

void compute_features_only(benchmark::State& state) {
  for (auto _ : state) {
    matrix_features f = compute_features(input());
    benchmark::DoNotOptimize(f);
  }
}

BENCHMARK(encode_full)->Unit(benchmark::kMillisecond);
BENCHMARK(encode_precomputed_features)->Unit(benchmark::kMillisecond);
BENCHMARK(compute_features_only)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sparserl

BENCHMARK_MAIN();
