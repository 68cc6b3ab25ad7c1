// The CSR16 templates and BSR with the detected (non-power-of-two) block shape on the GPU: every
// configuration their spaces offer, and the heuristic's pick, evaluated through the real
// harness (NVRTC, the GPU worker, fresh inputs, checked timed runs) on FEM meshes with 3 and 6
// dof per node and a mesh; each must be correct, and its speed-up over cuSPARSE is
// printed. Skips itself without a GPU (scripts/gpu-formats.sh runs it on the H200).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "eval/gpu_runner.h"
#include "kernel/abi.h"
#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/features.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

bool gpu_present() {
  static const bool present = [] {
    gpu_runner runner;
    return runner.device().ok;
  }();
  return present;
}

struct family_case {
  const char* family;
  int32_t rows, dims, dof;
  const char* order;
};

csr_matrix generate(const family_case& c) {
  generator_spec s = default_spec(c.family);
  s.rows = c.rows;
  s.dims = c.dims;
  s.dof = c.dof;
  s.order = c.order;
  s.seed = 18;
  return generate_matrix(s);
}

// Each configuration through the real harness on `task`: it must be correct; its verdict and
// speed-up are printed ("GPU:" lines, which the device scripts collect). Returns how many ran.
int expect_correct(evaluator& ev, const eval_task& task,
                   const std::vector<expert_config>& configs) {
  for (const expert_config& e : configs) {
    const verdict v = ev.evaluate_program(task, emit_program(e));
    EXPECT_TRUE(v.correct) << e.describe() << ": " << v.failure;
    std::printf("GPU: %s | %s | %s | speedup %.3f vs %s\n", task.id.c_str(), e.describe().c_str(),
                v.correct ? "correct" : v.failure.c_str(), v.speedup.value_or(0.0),
                v.baseline_name.c_str());
  }
  return static_cast<int>(configs.size());
}

TEST(GpuExpertDevice, Csr16AndDetectedBsrTemplatesAreCorrect) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU or CUDA driver on this machine";
  gpu_runner runner;
  evaluator ev(runner);
  int checked = 0;
  // 100k-300k rows: every kernel runs many blocks, while compiles (not runs) bound the test's time.
  for (const family_case& c : {family_case{"fem_mesh", 150000, 2, 3, "natural"},
                               family_case{"fem_mesh", 120000, 2, 6, "random"},
                               family_case{"mesh2d", 300000, 2, 1, "rcm"}}) {
    const csr_matrix a = generate(c);
    const matrix_features f = compute_features(a);
    const std::string label = std::string(c.family) + " dof " + std::to_string(c.dof) + " " +
                              c.order + " (" + std::to_string(a.nnz()) + " nnz, block " +
                              std::to_string(f.block_size) + ")";
    SCOPED_TRACE(label);
    for (const auto& [op, k] : {std::pair{sparse_op::spmv, 1}, std::pair{sparse_op::spmm, 32}}) {
      std::vector<expert_config> configs;
      for (const expert_config& e : expert_space(op, f, k))
        if (e.format == format_kind::csr16 || e.format == format_kind::bsr) configs.push_back(e);
      configs.push_back(pick_heuristic(op, f, k));
      checked += expect_correct(ev, {op, &a, k, label}, configs);
    }
  }
  EXPECT_GT(checked, 8);
}

// csr_merge_tiles on the GPU, where blocks run at once and the shares of a row crossing tiles
// race to its scratch slot: every offered configuration and one of 32 x 1 tiles (a 100k-nonzero
// row in thousands of shares) on a circuit matrix with a few dense rows and on a mesh, each
// correct in every checked run (the trials and timed runs reuse one loaded module, so a slot
// left non-zero would spoil the next run's sums).
TEST(GpuExpertDevice, MergeTilesAreCorrectWhereRowsCrossManyTiles) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU or CUDA driver on this machine";
  gpu_runner runner;
  evaluator ev(runner);
  int checked = 0;
  for (const family_case& c : {family_case{"circuit", 500000, 2, 1, "natural"},
                               family_case{"mesh2d", 300000, 2, 1, "rcm"}}) {
    const csr_matrix a = generate(c);
    const matrix_features f = compute_features(a);
    const std::string label = std::string(c.family) + " (" + std::to_string(a.nnz()) +
                              " nnz, longest row " + std::to_string(f.row_length_max) + ")";
    SCOPED_TRACE(label);
    std::vector<expert_config> configs;
    for (const expert_config& e : expert_space(sparse_op::spmv, f, 1))
      if (e.name == "csr_merge_tiles") configs.push_back(e);
    expert_config tiny = configs.front();
    tiny.params = {{"block", 32}, {"items", 1}, {"slots", 1 << 22}, {"rows_per_block", 4}};
    configs.push_back(tiny);
    checked += expect_correct(ev, {sparse_op::spmv, &a, 1, label}, configs);
  }
  EXPECT_EQ(checked, 6);
}

// RCSR on the GPU: every rcsr configuration on a mesh, a kNN and a power-law graph numbered at
// random (the last also hubs first), correct
// through the GPU worker's scratch buffer; and a program that skips the gather (reads the
// scratch buffer as it finds it) is judged wrong there too: the worker poisons it before every run.
TEST(GpuExpertDevice, RcsrTemplatesAreCorrectAndASkippedGatherIsWrong) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU or CUDA driver on this machine";
  gpu_runner runner;
  evaluator ev(runner);
  int checked = 0;
  for (const family_case& c :
       {family_case{"mesh2d", 300000, 2, 1, "random"}, family_case{"knn", 100000, 2, 1, "random"},
        family_case{"powerlaw", 100000, 2, 1, "random"}}) {
    const csr_matrix a = generate(c);
    const matrix_features f = compute_features(a);
    const std::string label =
        std::string(c.family) + " " + c.order + " (" + std::to_string(a.nnz()) + " nnz)";
    SCOPED_TRACE(label);
    for (const auto& [op, k] : {std::pair{sparse_op::spmv, 1}, std::pair{sparse_op::spmm, 32}}) {
      std::vector<expert_config> configs;
      for (const expert_config& e : expert_space(op, f, k))
        if (e.format == format_kind::rcsr) configs.push_back(e);
      checked += expect_correct(ev, {op, &a, k, label}, configs);
    }
    // The honest product on B without the gather into `work`.
    const std::string args =
        entry_signature(sparse_op::spmv, format_kind::rcsr, "spmv_rcsr_gather");
    const std::string product = entry_signature(sparse_op::spmv, format_kind::rcsr, "spmv_rcsr");
    const verdict skipped = ev.evaluate({sparse_op::spmv, &a, 1, label},
                                        "FORMAT: RCSR\nLAUNCH: block=128 rows_per_block=128\n" +
                                            args + " { (void)perm; }\n" + product + R"( {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= rows) return;
  float s = 0.0f;
  for (int i = row_ptr[p]; i < row_ptr[p + 1]; ++i) s += values[i] * work[col_idx[i]];
  y[perm[p]] = s;
}
)");
    EXPECT_TRUE(skipped.ran) << skipped.failure;
    EXPECT_FALSE(skipped.correct);
    std::printf("GPU: %s | RCSR without its gather | %s\n", label.c_str(), skipped.failure.c_str());
  }
  EXPECT_GE(checked, 8);
}

}  // namespace
}  // namespace sparserl
