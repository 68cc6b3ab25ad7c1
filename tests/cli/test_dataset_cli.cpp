// Drives `sparserl dataset build | corpus` through the real binary, on the CPU emulator.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "cli/cli_testing.h"
#include "sparse/gzip_file.h"
#include "sparse/matrix_market.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;

using ::testing::HasSubstr;
using testing::run_result;
using testing::slurp;

std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

class DatasetCli : public testing::cli_test {};

TEST_F(DatasetCli, GeneratedSetIsLabelledVerifiedAndTheSameOnEveryRun) {
  const std::string args = "dataset build --generate 9 --max-rows 96 --device cpu --threads 2 ";
  const run_result r = run(args + "-o " + path("sft.jsonl"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("9 samples")) << r.err;  // err: why a matrix was left out
  EXPECT_THAT(r.out, HasSubstr("labels: heuristic verified on cpu"));
  EXPECT_THAT(r.err, HasSubstr("labelling  9/9  100%"));  // the bar's last line in a log
  const std::vector<nlohmann::json> lines = read_lines(path("sft.jsonl"));
  ASSERT_EQ(lines.size(), 9u);
  for (const nlohmann::json& s : lines) {
    SCOPED_TRACE(s["name"].get<std::string>());
    EXPECT_EQ(s["rows"].size(), s["cols"].size());
    EXPECT_EQ(s["shape"].size(), 2u);
    EXPECT_EQ(s["code"].get<std::string>().rfind("FORMAT: " + s["format"].get<std::string>(), 0),
              0u);
    EXPECT_TRUE(s["split"] == "train" || s["split"] == "val");
    EXPECT_TRUE(s["candidates"][0]["correct"].get<bool>());
  }
  ASSERT_EQ(run(args + "-o " + path("again.jsonl") + " --no-progress").code, 0);
  EXPECT_EQ(slurp(path("sft.jsonl")), slurp(path("again.jsonl")));
}

TEST_F(DatasetCli, ExtendKeepsEarlierLabelsAndLabelsOnlyNewMatrices) {
  const std::string args = "dataset build --max-rows 64 --device cpu --no-progress ";
  ASSERT_EQ(run(args + "--generate 4 -o " + path("first.jsonl")).code, 0);
  // The same seed: the first 4 of these 7 matrices are the first run's.
  const run_result r =
      run(args + "--generate 7 --extend " + path("first.jsonl") + " -o " + path("first.jsonl"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("7 samples"));
  EXPECT_THAT(r.out, HasSubstr("4 from " + path("first.jsonl") + ", 3 new, 4 already labelled"));
  ASSERT_EQ(run(args + "--generate 7 -o " + path("whole.jsonl")).code, 0);
  EXPECT_EQ(slurp(path("first.jsonl")), slurp(path("whole.jsonl")));  // same samples, same order
  const run_result missing =
      run(args + "--generate 2 --extend " + path("none.jsonl") + " -o " + path("x.jsonl"));
  EXPECT_NE(missing.code, 0);
  EXPECT_THAT(missing.err, HasSubstr("none.jsonl"));
}

TEST_F(DatasetCli, MatrixDirectoryLabelsPassTheEvaluatorOnTheOriginalFiles) {
  fs::create_directories(path("mats"));
  ASSERT_EQ(run("matrix gen banded --rows 300 -o " + path("mats/banded.mtx")).code, 0);
  ASSERT_EQ(run("matrix gen rmat --rows 256 --avg-degree 6 -o " + path("mats/rmat.mtx.gz")).code,
            0);
  const run_result r = run("dataset build --matrices " + path("mats") +
                           " --device cpu --val-fraction 0.5 -o " + path("sft.jsonl.gz"));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(run("dataset build --matrices " + path("mats") +
                " --label heuristic --no-verify --val-fraction 0.5 --no-progress -o " +
                path("plain.jsonl"))
                .code,
            0);
  const std::vector<nlohmann::json> lines = read_lines(path("plain.jsonl"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["name"], "banded.mtx");
  EXPECT_EQ(lines[1]["name"], "rmat.mtx.gz");
  for (const nlohmann::json& s : lines) {
    std::ofstream(path("k.cu")) << s["code"].get<std::string>();
    const run_result e =
        run("eval --device cpu --matrix " + path("mats/" + s["name"].get<std::string>()) +
            " --program " + path("k.cu"));
    EXPECT_EQ(e.code, 0) << s["name"] << e.out << e.err;
  }
}

// --max-matrix-nnz is the size filter (--max-nnz, in training the embedding's sampled nonzeros,
// its old spelling here); --dataset-dir names the folder as the trainers do.
TEST_F(DatasetCli, MaxMatrixNnzLeavesLargerMatricesOutUnderEitherSpelling) {
  fs::create_directories(path("mats"));
  ASSERT_EQ(run("matrix gen banded --rows 300 -o " + path("mats/banded.mtx")).code, 0);
  ASSERT_EQ(run("matrix gen rmat --rows 256 --avg-degree 6 -o " + path("mats/rmat.mtx")).code, 0);
  const int64_t banded = read_matrix_market(path("mats/banded.mtx")).nnz();
  const int64_t rmat = read_matrix_market(path("mats/rmat.mtx")).nnz();
  ASSERT_NE(banded, rmat);
  const std::string limit = std::to_string((banded + rmat) / 2);
  const std::string kept = banded < rmat ? "banded.mtx" : "rmat.mtx";
  for (const std::string spelling : {"--max-matrix-nnz", "--max-nnz"}) {
    SCOPED_TRACE(spelling);
    const run_result r =
        run("dataset build --dataset-dir " + path("mats") + " " + spelling + " " + limit +
            " --label heuristic --no-verify --no-progress -o " + path("small.jsonl"));
    ASSERT_EQ(r.code, 0) << r.err;
    const std::vector<nlohmann::json> lines = read_lines(path("small.jsonl"));
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0]["name"], kept);
  }
}

TEST_F(DatasetCli, CorpusIsCappedAndDeterministic) {
  const std::string args = "dataset corpus --max-bytes 200000 -o ";
  const run_result r = run(args + path("a.jsonl"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("expert programs"));
  ASSERT_EQ(run(args + path("b.jsonl")).code, 0);
  EXPECT_EQ(slurp(path("a.jsonl")), slurp(path("b.jsonl")));
  size_t bytes = 0;
  for (const nlohmann::json& d : read_lines(path("a.jsonl"))) {
    bytes += d["text"].get<std::string>().size();
    EXPECT_TRUE(d["split"] == "train" || d["split"] == "val");
  }
  EXPECT_LE(bytes, 200000u);
  EXPECT_GT(bytes, 150000u);
}

// score-heuristic on the committed H200 labels (the smaller ones, to keep to seconds): a table by
// family and order, and the JSON.
TEST_F(DatasetCli, ScoreHeuristicRanksThePickInTheCommittedLabels) {
  const std::string all = read_file_decompressed(
      std::string(SPARSERL_SOURCE_DIR) + "/data/labels/spmv-h200.jsonl.gz", size_t{1} << 30);
  std::istringstream lines(all);
  std::ofstream small(path("small.jsonl"));
  size_t kept = 0;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && nlohmann::json::parse(line).value("nnz", int64_t{0}) <= 800000) {
      small << line << "\n";
      ++kept;
    }
  small.close();
  ASSERT_GE(kept, 10u);
  const run_result r =
      run("dataset score-heuristic " + path("small.jsonl") + " -o " + path("score.json"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("| stencil3d | natural |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| **all** |"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(testing::slurp(path("score.json")));
  ASSERT_EQ(j["labels"].size(), kept);
  int64_t found = 0;
  for (const auto& l : j["labels"]) {
    found += !l["ratio"].is_null();
    if (!l["ratio"].is_null()) {
      EXPECT_GT(l["ratio"].get<double>(), 0.0);
      EXPECT_LE(l["ratio"].get<double>(), 1.0);
      EXPECT_GE(l["rank"].get<int>(), 1);
    }
  }
  EXPECT_EQ(j["summary"]["found"].get<int64_t>(), found);
  // A CPU label file has no timed candidates: one line, nothing written.
  ASSERT_EQ(run("dataset build --generate 2 --max-rows 64 --device cpu --no-progress -o " +
                path("cpu.jsonl"))
                .code,
            0);
  expect_one_line_error("dataset score-heuristic " + path("cpu.jsonl") + " -o " + path("no.json"),
                        "no label with timed candidates");
  EXPECT_FALSE(fs::exists(path("no.json")));
  // Retiming needs the GPU's timing: on the emulator one line, nothing written (tests/train's
  // test_dataset_retime.cpp retimes with made-up times).
  expect_one_line_error(
      "dataset retime " + path("small.jsonl") + " --device cpu -o " + path("retimed.jsonl"),
      "retiming needs a GPU");
  EXPECT_FALSE(fs::exists(path("retimed.jsonl")));
  expect_one_line_error("dataset retime " + path("missing.jsonl") + " -o " + path("retimed.jsonl"),
                        "missing.jsonl");
  expect_one_line_error("dataset retime " + path("small.jsonl"), "give -o FILE (or --dry-run)");
  // --dry-run counts what a GPU would time, on any machine.
  const run_result plan = run("dataset retime " + path("small.jsonl") + " --dry-run");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_THAT(plan.out, HasSubstr(std::to_string(kept) + " timed labels"));
  EXPECT_THAT(plan.out, HasSubstr("candidates to time"));
}

TEST_F(DatasetCli, BadArgumentsAreOneLineErrors) {
  const std::string out = " -o " + path("x.jsonl");
  expect_one_line_error("dataset build" + out, "give --matrices DIR or --generate N");
  expect_one_line_error("dataset build --generate 2 --matrices " + path("") + out,
                        "give --matrices DIR or --generate N");
  expect_one_line_error("dataset build --matrices " + path("none") + out, "none: not a directory");
  expect_one_line_error("dataset build --generate 2 --op spmx" + out, "--op spmx");
  expect_one_line_error("dataset build --generate 2 --label best" + out, "--label best");
  expect_one_line_error("dataset build --generate 2 --device cpu --val-fraction 2" + out,
                        "--val-fraction 2: expected a fraction in 0..1");
  expect_one_line_error("dataset corpus --cuda-root " + path("nocuda") + out,
                        "nocuda: no include/ directory");
  expect_one_line_error("dataset corpus --no-experts --no-toolkit" + out, "no document fits");
  EXPECT_FALSE(fs::exists(path("x.jsonl")));
}

}  // namespace
}  // namespace sparserl
