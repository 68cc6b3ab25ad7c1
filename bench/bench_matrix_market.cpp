// Matrix Market read throughput (bytes of .mtx text per second) at 1 and 2 OpenMP threads.
// The input, a random real general matrix of SPARSERL_BENCH_NNZ entries (default 50M, ~1.3 GB
// of text), is written once to /tmp with write_matrix_market and reused by later runs.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "sparse/csr_matrix.h"
#include "sparse/gzip_file.h"
#include "sparse/matrix_market.h"

namespace sparserl {
namespace {

int64_t bench_nnz() {
  const char* env = std::getenv("SPARSERL_BENCH_NNZ");
  const int64_t nnz = env ? std::atoll(env) : 50'000'000;
  return nnz > 0 ? nnz : 50'000'000;
}

// About 50 entries per row at uniformly random columns and values in [-1, 1).
std::vector<triplet> random_triplets(int64_t nnz, int32_t n) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<triplet> out(static_cast<size_t>(nnz));
  for (triplet& t : out)
    t = {static_cast<int32_t>(rng() % n), static_cast<int32_t>(rng() % n), value(rng)};
  return out;
}

int32_t bench_dim() { return static_cast<int32_t>(std::max<int64_t>(1, bench_nnz() / 50)); }

// Written through a temp file + rename, so a file that exists is complete.
const std::string& bench_file() {
  static const std::string path = [] {
    const std::string p = "/tmp/sparserl_bench_mtx_v1_" + std::to_string(bench_nnz()) + ".mtx";
    if (!std::filesystem::exists(p))
      write_matrix_market(p, csr_from_triplets(bench_dim(), bench_dim(),
                                               random_triplets(bench_nnz(), bench_dim())));
    return p;
  }();
  return path;
}

void report(benchmark::State& state, size_t bytes, const csr_matrix& m) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["nnz"] = static_cast<double>(m.nnz());
  state.counters["threads"] = static_cast<double>(state.range(0));
}

// File -> CSR: read (page cache), scan, triplets -> CSR.
void bm_read_matrix_market(benchmark::State& state) {
  const std::string& path = bench_file();
  const size_t bytes = std::filesystem::file_size(path);
  omp_set_num_threads(static_cast<int>(state.range(0)));
  csr_matrix m;
  for (auto _ : state) {
    m = read_matrix_market(path);
    benchmark::DoNotOptimize(m.values.data());
  }
  report(state, bytes, m);
}

// Text already in memory -> CSR: the scan plus the triplet -> CSR conversion.
void bm_parse_matrix_market(benchmark::State& state) {
  static const std::string text = read_file_decompressed(bench_file(), SIZE_MAX);
  omp_set_num_threads(static_cast<int>(state.range(0)));
  csr_matrix m;
  for (auto _ : state) {
    m = parse_matrix_market(text.data(), text.size(), "bench");
    benchmark::DoNotOptimize(m.values.data());
  }
  report(state, text.size(), m);
}

// The serial triplet -> CSR step alone (same count and shape), to split the parse time.
void bm_csr_from_triplets(benchmark::State& state) {
  const std::vector<triplet> triplets = random_triplets(bench_nnz(), bench_dim());
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<triplet> copy = triplets;
    state.ResumeTiming();
    csr_matrix m = csr_from_triplets(bench_dim(), bench_dim(), std::move(copy));
    benchmark::DoNotOptimize(m.values.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * triplets.size()));
}

BENCHMARK(bm_read_matrix_market)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);
BENCHMARK(bm_parse_matrix_market)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);
BENCHMARK(bm_csr_from_triplets)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace
}  // namespace sparserl

BENCHMARK_MAIN();
