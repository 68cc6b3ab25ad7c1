// The SFT JSONL layout: round trips (extra fields kept, gzip), every bad line named by file and
// line, and the matrix a pattern becomes for the evaluation harness.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "scratch_dir.h"
#include "sparse/error.h"
#include "sparse/generators.h"
#include "sparse/matrix_market.h"
#include "sparse/pattern_values.h"
#include "train/sft_data.h"

namespace sparserl::train {
namespace {

using ::testing::HasSubstr;

const char* csr_code = "FORMAT: CSR\nLAUNCH: block=128 rows_per_block=128\n// source\n";

sft_sample small_sample() {
  sft_sample s;
  s.rows = {0, 0, 2};
  s.cols = {1, 3, 0};
  s.n_rows = 3;
  s.n_cols = 4;
  s.format = "CSR";
  s.code = csr_code;
  s.name = "tiny";
  s.split = "val";
  s.label = "autotune";
  s.op = sparse_op::spmm;
  s.k = 16;
  s.candidates = {{"csr_scalar spmv CSR block=128 unroll=1", 0.25, 1.5, true},
                  {"ell spmv ELL block=256 unroll=1", std::nullopt, std::nullopt, false}};
  s.extra["source_set"] = "suite-a";
  s.extra["weights"] = {1, 2};
  return s;
}

void expect_same(const sft_sample& a, const sft_sample& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.n_rows, b.n_rows);
  EXPECT_EQ(a.n_cols, b.n_cols);
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.code, b.code);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.split, b.split);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.k, b.k);
  ASSERT_EQ(a.candidates.size(), b.candidates.size());
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    EXPECT_EQ(a.candidates[i].program, b.candidates[i].program);
    EXPECT_EQ(a.candidates[i].time_ms, b.candidates[i].time_ms);
    EXPECT_EQ(a.candidates[i].speedup, b.candidates[i].speedup);
    EXPECT_EQ(a.candidates[i].correct, b.candidates[i].correct);
  }
  EXPECT_EQ(a.extra, b.extra);
}

TEST(sft_data, round_trips_every_field_plain_and_gzipped) {
  testing::scratch_dir dir;
  sft_sample minimal;
  minimal.n_rows = 2;
  minimal.n_cols = 2;
  minimal.format = "ELL";
  minimal.code = "FORMAT: ELL\nLAUNCH: block=64 rows_per_block=64\n";
  const std::vector<sft_sample> samples = {small_sample(), minimal};
  for (const std::string name : {"sft.jsonl", "sft.jsonl.gz"}) {
    write_sft_jsonl(dir / name, samples);
    const std::vector<sft_sample> back = read_sft_jsonl(dir / name);
    ASSERT_EQ(back.size(), 2u) << name;
    expect_same(back[0], samples[0]);
    expect_same(back[1], samples[1]);
  }
  EXPECT_NE(testing::read_text(dir / "sft.jsonl.gz").substr(0, 2), "{\"");  // really gzip
  // The original's fields first, in its order.
  EXPECT_EQ(testing::read_text(dir / "sft.jsonl")
                .rfind("{\"rows\":[0,0,2],\"cols\":[1,3,0],"
                       "\"shape\":[3,4],\"format\":\"CSR\",\"code\":",
                       0),
            0u);
}

TEST(sft_data, reads_the_original_layout_and_keeps_unknown_fields) {
  testing::scratch_dir dir;
  testing::write_text(
      dir / "orig.jsonl",
      "{\"rows\": [0, 1], \"cols\": [1, 0], \"shape\": [2, 2], \"format\": \"CSR\", "
      "\"code\": \"FORMAT: CSR\\nLAUNCH: block=32 rows_per_block=32\\n\", "
      "\"matrix_id\": 17}\n\n");
  const std::vector<sft_sample> s = read_sft_jsonl(dir / "orig.jsonl");
  ASSERT_EQ(s.size(), 1u);  // the blank line is skipped
  EXPECT_EQ(s[0].nnz(), 2);
  EXPECT_EQ(s[0].op, sparse_op::spmv);
  EXPECT_EQ(s[0].k, 1);
  EXPECT_EQ(s[0].extra["matrix_id"], 17);
  const nlohmann::json back = sft_sample_to_json(s[0]);
  EXPECT_EQ(back["matrix_id"], 17);
  EXPECT_FALSE(back.contains("op"));  // the original's fields only, when they say it all
}

TEST(sft_data, bad_lines_are_named_by_file_and_line) {
  testing::scratch_dir dir;
  const std::string good = nlohmann::json(sft_sample_to_json(small_sample())).dump();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "not JSON"},
      {"[1, 2]", "expected a JSON object"},
      {R"({"cols": [], "shape": [1, 1], "format": "CSR", "code": "FORMAT: CSR"})",
       "field 'rows': missing"},
      {R"({"rows": [0], "cols": [5], "shape": [1, 2], "format": "CSR", "code": "FORMAT: CSR"})",
       "field 'cols[0]': 5 is outside [0, 1]"},
      {R"({"rows": [0, 0], "cols": [1], "shape": [1, 2], "format": "CSR", "code": "FORMAT: CSR"})",
       "field 'cols': has 1 entries, rows has 2"},
      {R"({"rows": [0.5], "cols": [1], "shape": [1, 2], "format": "CSR", "code": "FORMAT: CSR"})",
       "field 'rows[0]': expected an integer"},
      {R"({"rows": [], "cols": [], "shape": [3], "format": "CSR", "code": "FORMAT: CSR"})",
       "field 'shape': expected [n_rows, n_cols]"},
      {R"({"rows": [], "cols": [], "shape": [1, 1], "format": "CSR", "code": "int main"})",
       "field 'code': does not begin with \"FORMAT:\""},
      {R"({"rows": [], "cols": [], "shape": [1, 1], "format": "ELL", "code": "FORMAT: CSR\n"})",
       "field 'format': \"ELL\" disagrees with the code's FORMAT line (\"CSR\")"},
      {R"({"rows": [], "cols": [], "shape": [1, 1], "format": "CSR", "code": "FORMAT: CSR",
           "op": "spmx"})",
       "field 'op': \"spmx\""},
      {R"({"rows": [], "cols": [], "shape": [1, 1], "format": "CSR", "code": "FORMAT: CSR",
           "candidates": [{"time_ms": 1}]})",
       "field 'candidates[0].program': missing"},
  };
  for (const auto& [line, why] : cases) {
    SCOPED_TRACE(line);
    std::string flat = line;
    for (char& c : flat)
      if (c == '\n') c = ' ';
    testing::write_text(dir / "bad.jsonl", good + "\n\n" + flat + "\n" + good + "\n");
    try {
      read_sft_jsonl(dir / "bad.jsonl");
      ADD_FAILURE() << "no error";
    } catch (const error& e) {
      EXPECT_THAT(e.what(), HasSubstr(dir / "bad.jsonl:3: "));
      EXPECT_THAT(e.what(), HasSubstr(why));
    }
  }
}

// A large generated matrix is stored by its recipe: no coordinates on disk, the same matrix back.
TEST(sft_data, samples_stored_by_their_generator_remake_the_matrix_and_check_its_digest) {
  generator_spec spec = default_spec("mesh2d");
  spec.rows = 900;
  spec.seed = 7;
  spec.order = "random";
  const csr_matrix m = generate_matrix(spec);
  sft_sample s = small_sample();
  const sft_sample pattern = sft_pattern_of(m);
  s.rows = pattern.rows;
  s.cols = pattern.cols;
  s.n_rows = m.rows;
  s.n_cols = m.cols;
  store_by_generator(s, spec, m);
  EXPECT_TRUE(s.by_generator());
  // The coordinates' memory is given back, not only cleared: dataset build keeps every sample.
  EXPECT_EQ(s.rows.capacity(), 0u);
  EXPECT_EQ(s.cols.capacity(), 0u);
  EXPECT_EQ(s.nnz(), m.nnz());
  const nlohmann::ordered_json j = sft_sample_to_json(s);
  EXPECT_FALSE(j.contains("rows"));
  EXPECT_FALSE(j.contains("cols"));
  EXPECT_EQ(j["nnz"], m.nnz());
  EXPECT_EQ(j["generator"]["order"], "random");
  testing::scratch_dir dir;
  const std::string path = dir / "by_generator.jsonl.gz";
  write_sft_jsonl(path, {s});
  const std::vector<sft_sample> back = read_sft_jsonl(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(back[0].by_generator());
  const csr_matrix again = to_matrix(back[0]);
  EXPECT_EQ(again.row_ptr, m.row_ptr);
  EXPECT_EQ(again.col_idx, m.col_idx);
  // Its values follow the pattern rule, as for a sample with coordinates.
  sft_sample listed = sft_pattern_of(m);
  EXPECT_EQ(to_matrix(listed).values, again.values);

  // Another seed makes another matrix: the digest says so instead of training on it.
  sft_sample changed = back[0];
  changed.generator->seed = 8;
  try {
    to_matrix(changed);
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("generators changed"));
  }
  // Without coordinates, the recipe and the count are required.
  nlohmann::json bare = nlohmann::json::parse(j.dump());
  bare.erase("nnz");
  EXPECT_THROW(sft_sample_from_json(bare), error);
  bare = nlohmann::json::parse(j.dump());
  bare["generator"]["family"] = "no_such_family";
  try {
    sft_sample_from_json(bare);
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("field 'generator'"));
  }
  bare = nlohmann::json::parse(j.dump());
  bare["generator"]["wings"] = 2;
  EXPECT_THROW(sft_sample_from_json(bare), error);
  bare = nlohmann::json::parse(j.dump());
  bare.erase("generator");
  EXPECT_THROW(sft_sample_from_json(bare), error);  // neither coordinates nor a recipe
}

TEST(sft_data, missing_file_is_an_error_naming_it) {
  testing::scratch_dir dir;
  EXPECT_THROW(
      {
        try {
          read_sft_jsonl(dir / "none.jsonl");
        } catch (const error& e) {
          EXPECT_THAT(e.what(), HasSubstr("none.jsonl"));
          throw;
        }
      },
      error);
}

TEST(sft_data, to_matrix_is_deterministic_order_free_and_never_near_zero) {
  generator_spec spec;
  spec.family = "rmat";
  spec.rows = 256;
  const csr_matrix original = generate_matrix(spec);
  sft_sample s = sft_pattern_of(original);
  s.format = "CSR";
  s.code = csr_code;
  const csr_matrix a = to_matrix(s);
  EXPECT_EQ(a.rows, original.rows);
  EXPECT_EQ(a.row_ptr, original.row_ptr);
  EXPECT_EQ(a.col_idx, original.col_idx);
  // The same pattern listed backwards, with one position twice, is the same matrix.
  sft_sample shuffled = s;
  std::reverse(shuffled.rows.begin(), shuffled.rows.end());
  std::reverse(shuffled.cols.begin(), shuffled.cols.end());
  shuffled.rows.push_back(s.rows[0]);
  shuffled.cols.push_back(s.cols[0]);
  const csr_matrix b = to_matrix(shuffled);
  EXPECT_EQ(b.col_idx, a.col_idx);
  EXPECT_EQ(b.values, a.values);
  int negative = 0;
  for (float v : a.values) {
    EXPECT_GE(std::fabs(v), 0.5f);
    EXPECT_LT(std::fabs(v), 1.0f);
    negative += v < 0;
  }
  // Both signs, and not a constant: the values vary.
  EXPECT_GT(negative, a.nnz() / 4);
  EXPECT_LT(negative, 3 * a.nnz() / 4);
  EXPECT_NE(pattern_value(0, 1), pattern_value(1, 0));
  // One rule everywhere: the same pattern read as a Matrix Market pattern file (as the reward
  // service's pattern requests are filled) gets exactly the values training gives it.
  std::string mtx = "%%MatrixMarket matrix coordinate pattern general\n" +
                    std::to_string(s.n_rows) + " " + std::to_string(s.n_cols) + " " +
                    std::to_string(s.rows.size()) + "\n";
  for (size_t i = 0; i < s.rows.size(); ++i)
    mtx += std::to_string(s.rows[i] + 1) + " " + std::to_string(s.cols[i] + 1) + "\n";
  const csr_matrix from_file = parse_matrix_market(mtx.data(), mtx.size(), "pattern.mtx");
  EXPECT_EQ(from_file.col_idx, a.col_idx);
  EXPECT_EQ(from_file.values, a.values);
}

}  // namespace
}  // namespace sparserl::train
