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

}  // namespace
}  // namespace sparserl
