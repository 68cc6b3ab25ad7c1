// Drives `sparserl eval` and `sparserl tune` on the CPU emulator through the real binary.
#include <nlohmann/json.hpp>

#include "cli/cli_testing.h"

namespace sparserl {
namespace {

using ::testing::HasSubstr;
using testing::run_result;

class EvalCli : public testing::cli_test {};

TEST_F(EvalCli, DefaultRunIsCorrectAndExitsZero) {
  const run_result r = run("eval --device cpu");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("correct"));
  EXPECT_THAT(r.out, HasSubstr("executor         cpu"));
  EXPECT_THAT(r.out, HasSubstr("correctness only"));  // no time is claimed without a GPU
}

TEST_F(EvalCli, JsonVerdictOfASpmmRun) {
  const run_result r = run("eval --device cpu --op spmm --k 8 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json v = nlohmann::json::parse(r.out);
  EXPECT_TRUE(v["correct"].get<bool>());
  EXPECT_EQ(v["trials"].get<int>(), 3);
  EXPECT_TRUE(v["kernel_ms"].is_null());
  EXPECT_DOUBLE_EQ(v["reward"].get<double>(), 1.0);
}

TEST_F(EvalCli, WrongProgramExitsOneWithItsReason) {
  std::ofstream(path("k.cu")) << "FORMAT: ELL\nLAUNCH: block=64 rows_per_block=64\n"
                              << "extern \"C\" __global__ void spmv_ell(int rows, int cols, int "
                                 "width, const int* __restrict__ col_idx, const float* "
                                 "__restrict__ values, const float* __restrict__ x, float* "
                                 "__restrict__ y) {\n"
                              << "  int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              << "  if (r < rows) y[r] = 1.0f;\n}\n";
  const run_result r = run("eval --device cpu --program " + path("k.cu"));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("wrong result"));
  EXPECT_THAT(r.out, HasSubstr("reward           0.0000"));
}

TEST_F(EvalCli, ProseIsNoProgram) {
  std::ofstream(path("prose.txt")) << "I think ELL would be best here.\n";
  const run_result r = run("eval --device cpu --json --program " + path("prose.txt"));
  EXPECT_EQ(r.code, 1);
  const nlohmann::json v = nlohmann::json::parse(r.out);
  EXPECT_FALSE(v["extracted"].get<bool>());
  EXPECT_DOUBLE_EQ(v["reward"].get<double>(), -1.0);
}

TEST_F(EvalCli, BadArgumentsAreOneLineErrors) {
  expect_one_line_error("eval --device cpu --program " + path("missing.cu"), "missing.cu");
  expect_one_line_error("eval --device cpu --op spmx", "--op spmx");
  expect_one_line_error("eval --device tpu", "--device tpu");
  expect_one_line_error("eval --device cpu --matrix " + path("none.mtx"), "none.mtx");
}

TEST_F(EvalCli, TuneSavesABestProgramThatEvaluatesCorrect) {
  const run_result t = run("tune --device cpu --threads 2 --top 100 -o " + path("best.cu"));
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_THAT(t.out, HasSubstr("candidates"));
  EXPECT_THAT(t.out, HasSubstr("[heuristic]"));
  // The emulator times nothing: the file is the first correct program, and says so.
  EXPECT_THAT(t.out, HasSubstr("first correct program (not timed) written to"));
  const run_result e = run("eval --device cpu --program " + path("best.cu"));
  EXPECT_EQ(e.code, 0) << e.out;
}

TEST_F(EvalCli, BenchWritesOneRowPerMatrix) {
  const run_result r = run("bench --suite tiny --only lp,small_rmat --device cpu -o " + path(""));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json doc = nlohmann::json::parse(testing::slurp(path("bench.json")));
  ASSERT_EQ(doc["matrices"].size(), 2u);
  for (const auto& m : doc["matrices"]) {  // where the tuning time went, summed over candidates
    EXPECT_GT(m["tune_phase_s"]["compile"].get<double>(), 0) << m["tune_phase_s"];
    EXPECT_GT(m["tune_phase_s"]["run"].get<double>(), 0) << m["tune_phase_s"];
    EXPECT_GT(m["tune_phase_s"]["check"].get<double>(), 0) << m["tune_phase_s"];
  }
  EXPECT_EQ(doc["matrices"][0]["matrix"], "lp");
  EXPECT_EQ(doc["executor"], "cpu");
  EXPECT_TRUE(doc["complete"].get<bool>());  // false only in the copies written along the way
  for (const auto& m : doc["matrices"]) {
    EXPECT_GT(m["nnz"].get<int64_t>(), 0);
    EXPECT_EQ(m["correct"].get<int>(), m["candidates"].get<int>());  // every template is right
    EXPECT_TRUE(m["cusparse_ms"].is_null());  // no GPU: nothing is timed, nothing invented
    EXPECT_EQ(m["cusparse_algorithm"], "");   // nor a winning cuSPARSE algorithm named
    // Every candidate is listed with its verdict; without a GPU none has a time.
    ASSERT_EQ(m["ranked"].size(), m["candidates"].get<size_t>());
    for (const auto& c : m["ranked"]) {
      EXPECT_TRUE(c["correct"].get<bool>()) << c.dump();
      EXPECT_FALSE(c["program"].get<std::string>().empty());
      EXPECT_TRUE(c["ms"].is_null()) << c.dump();
    }
  }
  const std::string csv = testing::slurp(path("bench.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);  // header + 2 rows
  expect_one_line_error("bench --suite tiny --only nosuch --device cpu -o " + path(""), "nosuch");
  // The output directory is made before the work, and one that cannot be is refused before it.
  const run_result nested =
      run("bench --suite tiny --only lp --device cpu -o " + path("runs/lp-only"));
  ASSERT_EQ(nested.code, 0) << nested.out << nested.err;
  EXPECT_FALSE(testing::slurp(path("runs/lp-only/bench.json")).empty());
  expect_one_line_error("bench --suite tiny --only lp --device cpu -o " + path("bench.csv/x"),
                        "cannot create the directory");

  // --rescore: today's pick looked up in an earlier run's ranking (given times here: candidate i
  // took 1 + i ms), against that run's own pick (renamed, so it is not found).
  nlohmann::json earlier = doc;
  std::vector<std::string> expected;
  for (auto& m : earlier["matrices"]) {
    int i = 0, pick_at = -1;
    for (auto& c : m["ranked"]) {
      c["ms"] = 1.0 + i;
      if (c["program"] == m["heuristic"]) pick_at = i;
      ++i;
    }
    ASSERT_GE(pick_at, 0) << m["heuristic"];
    char cell[32];
    std::snprintf(cell, sizeof cell, "| %.3fx | not timed |", 1.0 / (1.0 + pick_at));
    expected.push_back("| " + m["matrix"].get<std::string>() + " | an older pick | " +
                       m["heuristic"].get<std::string>() + " " + cell);
    m["heuristic"] = "an older pick";
  }
  {
    std::ofstream f(path("earlier.json"));
    f << earlier.dump();
  }
  const run_result re =
      run("bench --suite tiny --only lp,small_rmat --rescore " + path("earlier.json"));
  ASSERT_EQ(re.code, 0) << re.out << re.err;
  for (const std::string& line : expected)
    EXPECT_NE(re.out.find(line), std::string::npos) << re.out;
  expect_one_line_error("bench --suite tiny --rescore " + path("bench.csv"), "not JSON");
}

TEST_F(EvalCli, RealisticSuiteRunsShrunkOnTheCpu) {
  const run_result r = run(
      "bench --suite realistic --scale 2000 --only fem2d_dof3_random,road_rcm --device cpu -o " +
      path(""));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json doc = nlohmann::json::parse(testing::slurp(path("bench.json")));
  EXPECT_EQ(doc["suite"], "realistic");
  ASSERT_EQ(doc["matrices"].size(), 2u);
  EXPECT_EQ(doc["matrices"][0]["family"], "fem_mesh");
  for (const auto& m : doc["matrices"]) {
    EXPECT_GT(m["nnz"].get<int64_t>(), 0);
    EXPECT_LT(m["rows"].get<int64_t>(), 3000);  // shrunk by --scale
    EXPECT_EQ(m["correct"].get<int>(), m["candidates"].get<int>());
  }
  expect_one_line_error("bench --suite nosuch --device cpu -o " + path(""), "realistic");
  expect_one_line_error("bench --suite realistic --scale 0 --device cpu -o " + path(""), "scale");
}

}  // namespace
}  // namespace sparserl
