// The evaluation pipeline end to end on the CPU emulator: each reward tier, and the cheats the
// verification must catch (unwritten rows, modified input, output replayed from an earlier run).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "eval/cpu_runner.h"
#include "eval/evaluator.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

const char* csr_header = R"(FORMAT: CSR
LAUNCH: block=128 rows_per_block=128
)";

const char* csr_signature =
    "extern \"C\" __global__ void spmv_csr(int rows, int cols, int nnz, const int* __restrict__ "
    "row_ptr, const int* __restrict__ col_idx, const float* __restrict__ values, const float* "
    "__restrict__ x, float* __restrict__ y)";

std::string csr_program(const std::string& body) {
  return std::string(csr_header) + "```cuda\n" + csr_signature + " {\n" + body + "\n}\n```\n";
}

const char* row_sum = R"(
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) s += values[i] * x[col_idx[i]];
)";

class evaluator_test : public ::testing::Test {
 protected:
  void SetUp() override {
    generator_spec spec;
    spec.family = "random";
    spec.rows = 300;
    spec.density = 0.02;
    spec.seed = 7;
    matrix_ = generate_matrix(spec);
    task_ = {sparse_op::spmv, &matrix_, 1, "test:random-300"};
  }
  verdict evaluate(const std::string& completion) {
    evaluator e(runner_);
    return e.evaluate(task_, completion);
  }
  csr_matrix matrix_;
  eval_task task_;
  cpu_runner runner_;
};

TEST_F(evaluator_test, correct_program_earns_the_correct_reward) {
  const verdict v =
      evaluate("Here is my kernel:\n" + csr_program(std::string(row_sum) + "y[row] = s;"));
  EXPECT_TRUE(v.correct) << v.failure;
  EXPECT_EQ(v.trials, 3);
  EXPECT_EQ(v.executor, "cpu");
  EXPECT_FALSE(v.kernel_ms.has_value());  // the emulator never claims a time
  EXPECT_FALSE(v.speedup.has_value());
  EXPECT_DOUBLE_EQ(v.reward, reward_config{}.correct);
}

// The tuner sums these per matrix (bench's tune_phase_s): each stage that ran has a time, and a
// stage that did not run has none.
TEST_F(evaluator_test, each_stage_that_ran_reports_its_time) {
  const verdict ran = evaluate(csr_program(std::string(row_sum) + "y[row] = s;"));
  ASSERT_TRUE(ran.correct) << ran.failure;
  EXPECT_GT(ran.compile_ms, 0);
  EXPECT_GE(ran.prepare_ms, 0);
  EXPECT_GT(ran.run_ms, 0);
  EXPECT_GT(ran.check_ms, 0);
  const verdict broken = evaluate(csr_program("this does not compile;"));
  ASSERT_FALSE(broken.compiled);
  EXPECT_GT(broken.compile_ms, 0);
  EXPECT_EQ(broken.run_ms, 0);
  EXPECT_EQ(broken.check_ms, 0);
}

TEST_F(evaluator_test, prose_without_a_program_scores_lowest) {
  const verdict v = evaluate("I would use a CSR kernel with one thread per row.");
  EXPECT_FALSE(v.extracted);
  EXPECT_NE(v.failure.find("no program"), std::string::npos);
  EXPECT_DOUBLE_EQ(v.reward, reward_config{}.no_program);
}

TEST_F(evaluator_test, compile_error_keeps_the_log) {
  const verdict v =
      evaluate(csr_program("int row = blockIdx.x * blockDim.x + threadIdx.x\n y[row] = 0;"));
  EXPECT_TRUE(v.extracted);
  EXPECT_FALSE(v.compiled);
  EXPECT_NE(v.compile_log.find("error"), std::string::npos) << v.compile_log;
  EXPECT_DOUBLE_EQ(v.reward, reward_config{}.compile_error);
}

TEST_F(evaluator_test, screened_source_counts_as_a_compile_failure) {
  const verdict v = evaluate(csr_program("asm(\"trap;\");"));
  EXPECT_FALSE(v.compiled);
  EXPECT_NE(v.failure.find("rejected"), std::string::npos) << v.failure;
  EXPECT_DOUBLE_EQ(v.reward, reward_config{}.compile_error);
}

TEST_F(evaluator_test, rows_left_unwritten_are_caught) {
  const verdict v = evaluate(csr_program(std::string(row_sum) + "if (row % 7 != 3) y[row] = s;"));
  EXPECT_TRUE(v.ran);
  EXPECT_FALSE(v.correct);
  EXPECT_NE(v.failure.find("not written"), std::string::npos) << v.failure;
  EXPECT_DOUBLE_EQ(v.reward, reward_config{}.runtime_failure);
}

TEST_F(evaluator_test, modifying_the_input_is_caught) {
  const verdict v =
      evaluate(csr_program(std::string(row_sum) + "y[row] = s; ((float*)x)[row % cols] = 0.0f;"));
  EXPECT_FALSE(v.correct);
  EXPECT_NE(v.failure.find("modified its input x"), std::string::npos) << v.failure;
}

TEST_F(evaluator_test, output_replayed_from_an_earlier_trial_is_caught) {
  // Computes once, then replays the stored result: only fresh inputs per trial expose it.
  const std::string body = std::string(row_sum) +
                           "if (!replay_ready[0]) { replay[row] = s; }\n"
                           "y[row] = replay[row];\n"
                           "if (row == rows - 1) replay_ready[0] = 1;";
  const std::string completion =
      std::string(csr_header) +
      "__device__ float replay[4096];\n__device__ int replay_ready[1];\n" + csr_signature + " {\n" +
      body + "\n}\n";
  const verdict v = evaluate(completion);
  EXPECT_FALSE(v.correct);
  EXPECT_NE(v.failure.find("trial 2"), std::string::npos) << v.failure;
}

TEST_F(evaluator_test, fault_is_a_runtime_failure) {
  const verdict v =
      evaluate(csr_program(std::string(row_sum) + "y[row] = s + x[cols + (1 << 22)];"));
  EXPECT_FALSE(v.ran);
  EXPECT_NE(v.failure.find("runtime"), std::string::npos) << v.failure;
  EXPECT_DOUBLE_EQ(v.reward, reward_config{}.runtime_failure);
}

TEST_F(evaluator_test, spmm_is_verified_on_every_column) {
  eval_task spmm = task_;
  spmm.op = sparse_op::spmm;
  spmm.k = 5;
  const std::string program = R"(FORMAT: CSR
LAUNCH: block=64 rows_per_block=64
extern "C" __global__ void spmm_csr(int rows, int cols, int k, int nnz, const int* __restrict__ row_ptr,
    const int* __restrict__ col_idx, const float* __restrict__ values, const float* __restrict__ B,
    float* __restrict__ C) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  for (int j = 0; j < k - 1; ++j) {  // forgets the last column
    float s = 0.0f;
    for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) s += values[i] * B[col_idx[i] * k + j];
    C[row * k + j] = s;
  }
}
)";
  evaluator e(runner_);
  const verdict v = e.evaluate(spmm, program);
  EXPECT_TRUE(v.ran) << v.failure;
  EXPECT_FALSE(v.correct);
  EXPECT_NE(v.failure.find("][4]"), std::string::npos) << v.failure;
}

TEST_F(evaluator_test, an_id_reused_for_another_matrix_gets_that_matrixs_own_reference) {
  // A: the pattern with all values 1; B: the same pattern with other values, under the same id
  // on the same evaluator. A program that ignores the values is right for A only; were the
  // caches keyed by the id, B would be checked against A's cached reference and pass.
  csr_matrix a = matrix_, b = matrix_;
  std::fill(a.values.begin(), a.values.end(), 1.0f);
  const std::string ignores_values = csr_program(R"(
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) s += x[col_idx[i]];
  y[row] = s;)");
  evaluator e(runner_);
  const verdict on_a = e.evaluate({sparse_op::spmv, &a, 1, "reused-id"}, ignores_values);
  EXPECT_TRUE(on_a.correct) << on_a.failure;
  const verdict on_b = e.evaluate({sparse_op::spmv, &b, 1, "reused-id"}, ignores_values);
  EXPECT_TRUE(on_b.ran) << on_b.failure;
  EXPECT_FALSE(on_b.correct);
  EXPECT_NE(on_b.failure.find("wrong result"), std::string::npos) << on_b.failure;
  // And a correct program is judged right on B, against B's reference.
  const verdict right_on_b = e.evaluate({sparse_op::spmv, &b, 1, "reused-id"},
                                        csr_program(std::string(row_sum) + "y[row] = s;"));
  EXPECT_TRUE(right_on_b.correct) << right_on_b.failure;
}

// ---- RCSR: a gather into the runner's scratch buffer, then the product on the reordered matrix

const char* rcsr_args =
    "(int rows, int cols, int nnz, const int* __restrict__ perm, const int* __restrict__ row_ptr, "
    "const int* __restrict__ col_idx, const float* __restrict__ values, float* __restrict__ work, "
    "const float* __restrict__ x, float* __restrict__ y)";

// `gather` is the body of spmv_rcsr_gather (p is the position); the product is the honest one.
std::string rcsr_program(const std::string& gather, const std::string& globals = "") {
  return "FORMAT: RCSR\nLAUNCH: block=64 rows_per_block=64\n" + globals +
         "extern \"C\" __global__ void spmv_rcsr_gather" + rcsr_args +
         " {\n  const int p = blockIdx.x * blockDim.x + threadIdx.x;\n  if (p >= rows) return;\n" +
         gather + "\n}\nextern \"C\" __global__ void spmv_rcsr" + rcsr_args + R"( {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= rows) return;
  float s = 0.0f;
  for (int i = row_ptr[p]; i < row_ptr[p + 1]; ++i) s += values[i] * work[col_idx[i]];
  y[perm[p]] = s;
}
)";
}

// A square matrix numbered at random, where the renumbering is not the identity.
csr_matrix random_mesh() {
  generator_spec s = default_spec("mesh2d");
  s.rows = 400;
  s.order = "random";
  s.seed = 3;
  return generate_matrix(s);
}

TEST_F(evaluator_test, rcsr_gathers_into_scratch_and_writes_y_in_the_second_entry) {
  const csr_matrix mesh = random_mesh();
  evaluator e(runner_);
  const verdict v =
      e.evaluate({sparse_op::spmv, &mesh, 1, "rcsr-mesh"}, rcsr_program("work[p] = x[perm[p]];"));
  EXPECT_TRUE(v.correct) << v.failure;
  // perm, row_ptr, col_idx, values and the scratch buffer (cols floats).
  EXPECT_EQ(v.footprint_bytes, 4 * (mesh.rows + (mesh.rows + 1) + 2 * mesh.nnz()) + 4 * mesh.cols);
}

// Reward integrity: the scratch buffer holds NaN at the start of every run, so a program that
// reads it without gathering fails, and so does one that gathers in its first run only and
// relies on the buffer keeping x (the next trial's x differs, and the buffer is poisoned again).
TEST_F(evaluator_test, rcsr_without_its_gather_is_judged_wrong) {
  const csr_matrix mesh = random_mesh();
  evaluator e(runner_);
  const verdict skipped =
      e.evaluate({sparse_op::spmv, &mesh, 1, "rcsr-mesh"}, rcsr_program("(void)perm;"));
  EXPECT_TRUE(skipped.ran) << skipped.failure;
  EXPECT_FALSE(skipped.correct);
  EXPECT_NE(skipped.failure.find("trial 1: wrong result"), std::string::npos) << skipped.failure;
  EXPECT_DOUBLE_EQ(skipped.reward, reward_config{}.runtime_failure);
  const verdict once = e.evaluate({sparse_op::spmv, &mesh, 1, "rcsr-mesh"},
                                  rcsr_program("if (!gathered[0]) work[p] = x[perm[p]];\n"
                                               "  if (p == rows - 1) gathered[0] = 1;",
                                               "__device__ int gathered[1];\n"));
  EXPECT_FALSE(once.correct);
  EXPECT_NE(once.failure.find("trial 2: wrong result"), std::string::npos) << once.failure;
}

TEST_F(evaluator_test, rcsr_refuses_a_matrix_that_is_not_square) {
  const csr_matrix wide = csr_from_triplets(10, 12, {{0, 11, 1.0f}, {9, 0, 2.0f}});
  evaluator e(runner_);
  const verdict v =
      e.evaluate({sparse_op::spmv, &wide, 1, "rcsr-wide"}, rcsr_program("work[p] = x[perm[p]];"));
  EXPECT_FALSE(v.ran);
  EXPECT_EQ(v.failure,
            "format: RCSR: the matrix is 10 x 12; a symmetric renumbering needs a square matrix "
            "(use CSR)");
}

}  // namespace
}  // namespace sparserl
