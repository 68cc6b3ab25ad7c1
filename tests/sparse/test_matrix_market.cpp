#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sparse/error.h"
#include "sparse/matrix_market.h"
#include "sparse/pattern_values.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using dense_map = std::map<std::pair<int32_t, int32_t>, float>;

dense_map to_map(const csr_matrix& m) {
  dense_map out;
  for (int32_t r = 0; r < m.rows; ++r)
    for (int32_t i = m.row_ptr[r]; i < m.row_ptr[r + 1]; ++i) out[{r, m.col_idx[i]}] = m.values[i];
  return out;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

void expect_identical(const csr_matrix& a, const csr_matrix& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  ASSERT_EQ(a.row_ptr, b.row_ptr);
  ASSERT_EQ(a.col_idx, b.col_idx);
  ASSERT_EQ(a.values.size(), b.values.size());
  for (size_t i = 0; i < a.values.size(); ++i)
    ASSERT_EQ(bits(a.values[i]), bits(b.values[i])) << "value " << i << ": " << a.values[i];
}

// Finite floats drawn from every exponent (uniform bit patterns), so the writer's shortest form
// is exercised on denormals, huge and tiny values, not just on [0, 1).
float random_finite_float(std::mt19937& rng) {
  for (;;) {
    const uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, sizeof f);
    if (std::isfinite(f)) return f;
  }
}

csr_matrix random_matrix(int32_t rows, int32_t cols, double density, uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution keep(density);
  std::vector<triplet> entries;
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c)
      if (keep(rng)) entries.push_back({r, c, random_finite_float(rng)});
  return csr_from_triplets(rows, cols, std::move(entries));
}

class matrix_market_test : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("sparserl_mtx_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_text(const std::string& name, const std::string& text) const {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  std::string write_gzip(const std::string& name, const std::string& text) const {
    const std::string p = path(name);
    gzFile gz = gzopen(p.c_str(), "wb");
    EXPECT_NE(gz, nullptr);
    EXPECT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    EXPECT_EQ(gzclose(gz), Z_OK);
    return p;
  }

  csr_matrix read_text(const std::string& text, const mtx_read_options& options = {}) const {
    return read_matrix_market(write_text("in.mtx", text), options);
  }

  // The message must start "<path>:<line>: " and give the reason.
  void expect_error(const std::string& text, int64_t line, const std::string& why,
                    const mtx_read_options& options = {}) const {
    const std::string p = write_text("bad.mtx", text);
    EXPECT_THAT([&] { read_matrix_market(p, options); },
                ::testing::ThrowsMessage<error>(
                    AllOf(StartsWith(p + ":" + std::to_string(line) + ": "), HasSubstr(why))))
        << text;
  }

  std::vector<std::string> leftover_temp_files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().find(".tmp.") != std::string::npos)
        out.push_back(e.path().string());
    return out;
  }

  fs::path dir_;
};

const std::string general_banner = "%%MatrixMarket matrix coordinate real general\n";

// ---- round trips -------------------------------------------------------------------------

TEST_F(matrix_market_test, round_trips_random_matrices_plain_and_gzip) {
  struct shape {
    int32_t rows, cols;
    double density;
  };
  const shape shapes[] = {{37, 53, 0.1}, {200, 9, 0.3}, {1, 1, 1.0}, {64, 64, 0.02}, {3, 500, 0.5}};
  uint32_t seed = 1;
  for (const shape& s : shapes) {
    const csr_matrix m = random_matrix(s.rows, s.cols, s.density, seed++);
    for (const char* name : {"m.mtx", "m.mtx.gz"}) {
      SCOPED_TRACE(std::string(name) + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols));
      write_matrix_market(path(name), m);
      expect_identical(read_matrix_market(path(name)), m);
    }
  }
  EXPECT_THAT(leftover_temp_files(), ::testing::IsEmpty());
}

TEST_F(matrix_market_test, round_trips_empty_matrices_and_empty_rows) {
  csr_matrix empty;  // 0 x 0
  csr_matrix no_entries = csr_from_triplets(4, 7, {});
  // Rows 0, 2, 3 and 5 are empty.
  csr_matrix gaps = csr_from_triplets(6, 3, {{1, 2, 1.5f}, {4, 0, -2.0f}, {4, 1, 1e-30f}});
  for (const csr_matrix* m : {&empty, &no_entries, &gaps}) {
    for (const char* name : {"e.mtx", "e.mtx.gz"}) {
      write_matrix_market(path(name), *m);
      expect_identical(read_matrix_market(path(name)), *m);
    }
  }
}

TEST_F(matrix_market_test, round_trips_extreme_float_values_exactly) {
  const float values[] = {std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::lowest(),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::denorm_min(),
                          0.1f,
                          1.0f / 3.0f,
                          16777217.0f,
                          -0.0f};
  std::vector<triplet> entries;
  for (int32_t i = 0; i < static_cast<int32_t>(std::size(values)); ++i)
    entries.push_back({i, i, values[i]});
  const int32_t n = static_cast<int32_t>(std::size(values));
  const csr_matrix m = csr_from_triplets(n, n, entries);
  write_matrix_market(path("x.mtx"), m);
  expect_identical(read_matrix_market(path("x.mtx")), m);
}

TEST_F(matrix_market_test, writes_gzip_only_for_gz_names_and_detects_gzip_by_magic) {
  const csr_matrix m = random_matrix(20, 20, 0.2, 7);
  write_matrix_market(path("a.mtx"), m);
  write_matrix_market(path("a.mtx.gz"), m);
  auto first_bytes = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::string s(2, '\0');
    in.read(&s[0], 2);
    return s;
  };
  EXPECT_EQ(first_bytes(path("a.mtx")), "%%");
  EXPECT_EQ(first_bytes(path("a.mtx.gz")), "\x1f\x8b");
  fs::rename(path("a.mtx.gz"), path("gzip_without_suffix.mtx"));
  expect_identical(read_matrix_market(path("gzip_without_suffix.mtx")), m);
}

TEST_F(matrix_market_test, writes_the_general_real_banner_and_one_based_entries) {
  write_matrix_market(path("w.mtx"), csr_from_triplets(2, 3, {{1, 2, 0.5f}, {0, 0, -4.0f}}));
  std::ifstream in(path("w.mtx"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, general_banner + "2 3 2\n1 1 -4\n2 3 0.5\n");
}

TEST_F(matrix_market_test, reads_concatenated_gzip_members_as_one_stream) {
  const std::string p = path("two_members.mtx.gz");
  for (const char* part :
       {"%%MatrixMarket matrix coordinate real general\n2 2 2\n", "1 1 3\n2 2 4\n"}) {
    gzFile gz = gzopen(p.c_str(), "ab");
    ASSERT_NE(gz, nullptr);
    gzputs(gz, part);
    ASSERT_EQ(gzclose(gz), Z_OK);
  }
  EXPECT_EQ(to_map(read_matrix_market(p)), (dense_map{{{0, 0}, 3.0f}, {{1, 1}, 4.0f}}));
}

TEST_F(matrix_market_test, overwrites_an_existing_file_atomically) {
  const csr_matrix a = random_matrix(10, 10, 0.3, 1), b = random_matrix(5, 8, 0.5, 2);
  write_matrix_market(path("o.mtx"), a);
  write_matrix_market(path("o.mtx"), b);
  expect_identical(read_matrix_market(path("o.mtx")), b);
  EXPECT_THAT(leftover_temp_files(), ::testing::IsEmpty());
}

TEST_F(matrix_market_test, write_failure_names_the_path_and_errno_reason) {
  const csr_matrix m = random_matrix(4, 4, 0.5, 3);
  const std::string missing_dir = path("no/such/dir/m.mtx");
  EXPECT_THAT([&] { write_matrix_market(missing_dir, m); },
              ::testing::ThrowsMessage<error>(
                  AllOf(StartsWith(missing_dir + ": "), HasSubstr("No such file or directory"))));
  // The target is a non-empty directory: everything is written, then rename fails.
  const std::string is_dir = path("taken.mtx");
  fs::create_directories(fs::path(is_dir) / "child");
  EXPECT_THAT([&] { write_matrix_market(is_dir, m); },
              ::testing::ThrowsMessage<error>(
                  AllOf(StartsWith(is_dir + ": "), HasSubstr("rename"), HasSubstr("directory"))));
  EXPECT_THAT(leftover_temp_files(), ::testing::IsEmpty());
  EXPECT_TRUE(fs::is_directory(is_dir));
}

TEST_F(matrix_market_test, refuses_to_write_an_invalid_matrix) {
  csr_matrix m = random_matrix(4, 4, 0.5, 3);
  m.row_ptr.pop_back();
  EXPECT_THAT([&] { write_matrix_market(path("bad.mtx"), m); },
              ::testing::ThrowsMessage<error>(
                  AllOf(StartsWith(path("bad.mtx") + ": "), HasSubstr("row_ptr"))));
  EXPECT_FALSE(fs::exists(path("bad.mtx")));
}

// ---- symmetry, fields, duplicates ----------------------------------------------------------

TEST_F(matrix_market_test, expands_symmetric_to_both_triangles) {
  const csr_matrix m = read_text(
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "3 3 4\n"
      "1 1 2.0\n"
      "2 1 -1.5\n"
      "3 2 4\n"
      "3 3 1\n");
  EXPECT_EQ(m.nnz(), 6);  // 2 diagonal + 2 x 2 mirrored
  EXPECT_EQ(to_map(m), (dense_map{{{0, 0}, 2.0f},
                                  {{1, 0}, -1.5f},
                                  {{0, 1}, -1.5f},
                                  {{2, 1}, 4.0f},
                                  {{1, 2}, 4.0f},
                                  {{2, 2}, 1.0f}}));
  validate_csr(m);
}

TEST_F(matrix_market_test, expands_skew_symmetric_with_negated_mirror) {
  const csr_matrix m = read_text(
      "%%MatrixMarket matrix coordinate real skew-symmetric\n"
      "3 3 2\n"
      "2 1 3\n"
      "3 1 -0.5\n");
  EXPECT_EQ(to_map(m),
            (dense_map{{{1, 0}, 3.0f}, {{0, 1}, -3.0f}, {{2, 0}, -0.5f}, {{0, 2}, 0.5f}}));
}

TEST_F(matrix_market_test, pattern_entries_get_the_pattern_value_rule) {
  const std::string text =
      "%%MatrixMarket matrix coordinate pattern general\n"
      "2 3 4\n"
      "1 3\n"
      "2 1\n"
      "2 2\n"
      "1 3\n";  // listed twice: counts once
  const csr_matrix general = read_text(text);
  EXPECT_EQ(to_map(general), (dense_map{{{0, 2}, pattern_value(0, 2)},
                                        {{1, 0}, pattern_value(1, 0)},
                                        {{1, 1}, pattern_value(1, 1)}}));
  EXPECT_EQ(general.values, read_text(text).values);  // read twice, the same matrix
  std::set<float> distinct(general.values.begin(), general.values.end());
  EXPECT_EQ(distinct.size(), 3u);  // not all one value (as all-ones would be)
  for (float v : general.values) EXPECT_NE(v, 1.0f);
  const csr_matrix symmetric = read_text(
      "%%MatrixMarket matrix coordinate pattern symmetric\n"
      "2 2 2\n"
      "2 1\n"
      "2 2\n");
  EXPECT_EQ(to_map(symmetric), (dense_map{{{1, 0}, pattern_value(1, 0)},
                                          {{0, 1}, pattern_value(0, 1)},
                                          {{1, 1}, pattern_value(1, 1)}}));
}

TEST_F(matrix_market_test, integer_values_convert_to_float) {
  const csr_matrix m = read_text(
      "%%MatrixMarket matrix coordinate integer symmetric\n"
      "2 2 2\n"
      "1 1 -7\n"
      "2 1 16777217\n");  // 2^24 + 1 rounds to the nearest float
  EXPECT_EQ(to_map(m), (dense_map{{{0, 0}, -7.0f},
                                  {{1, 0}, static_cast<float>(16777217LL)},
                                  {{0, 1}, static_cast<float>(16777217LL)}}));
}

TEST_F(matrix_market_test, sums_duplicate_entries) {
  const csr_matrix m = read_text(general_banner +
                                 "2 2 4\n"
                                 "1 1 1.5\n"
                                 "2 2 1\n"
                                 "1 1 2.25\n"
                                 "1 1 -0.5\n");
  EXPECT_EQ(to_map(m), (dense_map{{{0, 0}, 1.5f + 2.25f - 0.5f}, {{1, 1}, 1.0f}}));
}

TEST_F(matrix_market_test, symmetric_file_with_both_triangles_sums_the_mirrors) {
  const csr_matrix m = read_text(
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "2 2 2\n"
      "2 1 1\n"
      "1 2 2\n");
  EXPECT_EQ(to_map(m), (dense_map{{{1, 0}, 3.0f}, {{0, 1}, 3.0f}}));
}

// ---- accepted layout variations -------------------------------------------------------------

TEST_F(matrix_market_test, accepts_comments_blank_lines_crlf_and_trailing_whitespace) {
  const csr_matrix m = read_text(
      "%%MatrixMarket Matrix COORDINATE Real GENERAL  \r\n"
      "% a comment\r\n"
      "%%another banner-like comment\r\n"
      "\r\n"
      "   \t\r\n"
      "  2 2   2  \r\n"
      "% comment between entries\r\n"
      "\t1 1 1.5 \t\r\n"
      "\r\n"
      "2 2 -2\r\n"
      "   \r\n");
  EXPECT_EQ(to_map(m), (dense_map{{{0, 0}, 1.5f}, {{1, 1}, -2.0f}}));
}

TEST_F(matrix_market_test, accepts_a_last_line_without_newline) {
  const csr_matrix m = read_text(general_banner + "1 2 1\n1 2 5");
  EXPECT_EQ(to_map(m), (dense_map{{{0, 1}, 5.0f}}));
}

TEST_F(matrix_market_test, parses_number_spellings) {
  const csr_matrix m = read_text(general_banner +
                                 "1 6 6\n"
                                 "1 1 1e3\n"
                                 "1 2 -.5\n"
                                 "1 3 +2\n"
                                 "1 4 1.5E-2\n"
                                 "1 5 1e-50\n"  // below float's range: 0
                                 "1 6 7.\n");
  EXPECT_EQ(to_map(m), (dense_map{{{0, 0}, 1000.0f},
                                  {{0, 1}, -0.5f},
                                  {{0, 2}, 2.0f},
                                  {{0, 3}, 0.015f},
                                  {{0, 4}, 0.0f},
                                  {{0, 5}, 7.0f}}));
}

TEST_F(matrix_market_test, accepts_the_largest_dimension) {
  const csr_matrix m = read_text(general_banner + "1 2147483647 1\n1 2147483647 5\n");
  EXPECT_EQ(m.cols, 2147483647);
  EXPECT_EQ(to_map(m), (dense_map{{{0, 2147483646}, 5.0f}}));
}

TEST_F(matrix_market_test, nonfinite_values_only_with_the_option) {
  mtx_read_options allow;
  allow.allow_nonfinite = true;
  const csr_matrix m =
      read_text(general_banner + "1 4 4\n1 1 nan\n1 2 -inf\n1 3 1e39\n1 4 Inf\n", allow);
  ASSERT_EQ(m.nnz(), 4);
  EXPECT_TRUE(std::isnan(m.values[0]));
  EXPECT_EQ(m.values[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(m.values[2], std::numeric_limits<float>::infinity());  // overflows float
  EXPECT_EQ(m.values[3], std::numeric_limits<float>::infinity());
}

TEST_F(matrix_market_test, parse_from_memory_names_the_source_in_errors) {
  const std::string text = general_banner + "2 2 1\n3 1 1\n";
  EXPECT_THAT([&] { parse_matrix_market(text.data(), text.size(), "<buffer>"); },
              ::testing::ThrowsMessage<error>(StartsWith("<buffer>:3: row index '3'")));
}

// ---- malformed headers ---------------------------------------------------------------------

TEST_F(matrix_market_test, rejects_an_empty_file) { expect_error("", 1, "empty file"); }

TEST_F(matrix_market_test, rejects_a_missing_banner) {
  expect_error("3 3 1\n1 1 1\n", 1, "missing %%MatrixMarket banner");
}

TEST_F(matrix_market_test, rejects_a_misspelt_banner) {
  expect_error("%MatrixMarket matrix coordinate real general\n1 1 0\n", 1,
               "missing %%MatrixMarket banner");
}

TEST_F(matrix_market_test, rejects_an_incomplete_banner) {
  expect_error("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "incomplete banner");
}

TEST_F(matrix_market_test, rejects_objects_other_than_matrix) {
  expect_error("%%MatrixMarket vector coordinate real general\n1 1 0\n", 1,
               "object 'vector' is not supported");
}

TEST_F(matrix_market_test, rejects_array_format_clearly) {
  expect_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1,
               "array format is not supported");
}

TEST_F(matrix_market_test, rejects_an_unknown_format) {
  expect_error("%%MatrixMarket matrix sparse real general\n1 1 0\n", 1, "unknown format 'sparse'");
}

TEST_F(matrix_market_test, rejects_complex_field) {
  expect_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1,
               "complex field is not supported");
}

TEST_F(matrix_market_test, rejects_an_unknown_field) {
  expect_error("%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n", 1,
               "unknown field 'quaternion'");
}

TEST_F(matrix_market_test, rejects_hermitian_symmetry) {
  expect_error("%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 1,
               "hermitian symmetry is not supported");
}

TEST_F(matrix_market_test, rejects_an_unknown_symmetry) {
  expect_error("%%MatrixMarket matrix coordinate real upper\n1 1 0\n", 1,
               "unknown symmetry 'upper'");
}

TEST_F(matrix_market_test, rejects_a_missing_size_line) {
  expect_error(general_banner + "% only comments\n\n", 3, "file ends before the size line");
}

TEST_F(matrix_market_test, rejects_a_negative_size) {
  expect_error(general_banner + "% comment\n3 -3 1\n1 1 1\n", 3, "column count '-3' is negative");
}

TEST_F(matrix_market_test, rejects_a_non_numeric_size) {
  expect_error(general_banner + "3 x 1\n", 2, "column count 'x' is not an integer");
  expect_error(general_banner + "3 3 1.5\n", 2, "entry count '1.5' is not an integer");
}

TEST_F(matrix_market_test, rejects_a_short_or_long_size_line) {
  expect_error(general_banner + "3 3\n", 2, "size line must be 'rows cols nnz', found 2");
  expect_error(general_banner + "3 3 1 1\n", 2, "unexpected '1' after 'rows cols nnz'");
}

TEST_F(matrix_market_test, rejects_dimensions_of_two_to_the_31) {
  expect_error(general_banner + "2147483648 1 0\n", 2, "row count '2147483648' is too large");
  expect_error(general_banner + "1 99999999999999999999999 0\n", 2, "column count");
}

TEST_F(matrix_market_test, rejects_a_non_square_symmetric_matrix) {
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", 2, "must be square");
}

TEST_F(matrix_market_test, rejects_declared_sizes_beyond_max_bytes) {
  mtx_read_options options;
  options.max_bytes = 100000;
  // The estimate: each (mirrored) entry as a triplet plus its CSR column and value, plus
  // row_ptr and the per-row cursor of the triplet -> CSR conversion.
  const int64_t per_entry = sizeof(triplet) + sizeof(int32_t) + sizeof(float);
  const int64_t general = 5000 * per_entry + 1001 * 8;
  expect_error(general_banner + "1000 1000 5000\n", 2,
               "needs " + std::to_string(general) +
                   " bytes (triplets + CSR), more than the limit "
                   "of 100000 bytes",
               options);
  const int64_t symmetric = 2 * 3000 * per_entry + 1001 * 8;  // mirrored: twice the entries
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n1000 1000 3000\n", 2,
               "needs " + std::to_string(symmetric) + " bytes", options);
  // The same declarations fit a larger limit: they fail later, on the missing entries.
  options.max_bytes = symmetric;
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n1000 1000 3000\n", 2,
               "file ends after 0 entries", options);
}

// ---- malformed entries ---------------------------------------------------------------------

TEST_F(matrix_market_test, rejects_index_zero) {
  expect_error(general_banner + "3 3 2\n1 1 1\n0 2 1\n", 4,
               "row index '0' is out of range 1..3 (indices are 1-based)");
}

TEST_F(matrix_market_test, rejects_an_index_beyond_the_dimension) {
  expect_error(general_banner + "3 4 2\n% c\n1 1 1\n2 5 1\n", 5,
               "column index '5' is out of range 1..4");
  expect_error(general_banner + "3 4 1\n-1 1 1\n", 3, "row index '-1' is out of range");
}

TEST_F(matrix_market_test, rejects_fewer_entries_than_declared) {
  expect_error(general_banner + "3 3 3\n1 1 1\n2 2 2\n", 4,
               "file ends after 2 entries, but line 2 declares 3");
  expect_error(general_banner + "3 3 3\n1 1 1\n\n% trailing comment", 5,
               "file ends after 1 entries, but line 2 declares 3");
}

TEST_F(matrix_market_test, rejects_more_entries_than_declared) {
  expect_error(general_banner + "3 3 2\n1 1 1\n2 2 2\n% c\n3 3 3\n1 2 4\n", 6,
               "more entries than the 2 declared on line 2 (found 4)");
}

TEST_F(matrix_market_test, rejects_non_numeric_tokens) {
  expect_error(general_banner + "3 3 1\na 1 1\n", 3, "row index 'a' is not an integer");
  expect_error(general_banner + "3 3 1\n1 2x 1\n", 3, "column index '2x' is not an integer");
  expect_error(general_banner + "3 3 1\n1 2 1.5.2\n", 3, "value '1.5.2' is not a number");
  expect_error(general_banner + "3 3 1\n1 2 0x10\n", 3, "value '0x10' is not a number");
  expect_error("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1.5\n", 3,
               "value '1.5' is not a 64-bit integer");
}

TEST_F(matrix_market_test, rejects_a_missing_value) {
  expect_error(general_banner + "3 3 2\n1 1 1\n1 2\n", 4, "missing value");
  expect_error("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2   \r\n", 3,
               "missing value");
}

TEST_F(matrix_market_test, rejects_a_missing_column_index) {
  expect_error(general_banner + "3 3 1\n1\n", 3, "missing column index");
}

TEST_F(matrix_market_test, rejects_extra_tokens) {
  expect_error(general_banner + "3 3 1\n1 1 1 0\n", 3, "unexpected '0' after the value");
  expect_error("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", 3,
               "unexpected '1' after the column index (field is pattern)");
}

TEST_F(matrix_market_test, rejects_nonfinite_values_by_default) {
  expect_error(general_banner + "3 3 2\n1 1 1\n2 2 NaN\n", 4, "value 'NaN' is not finite");
  expect_error(general_banner + "3 3 1\n2 2 -inf\n", 3, "value '-inf' is not finite");
  expect_error(general_banner + "3 3 1\n2 2 1e39\n", 3, "value '1e39' is not finite");
}

TEST_F(matrix_market_test, rejects_a_skew_symmetric_diagonal_entry) {
  expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n", 4,
               "diagonal entry (2, 2) in a skew-symmetric matrix");
}

TEST_F(matrix_market_test, errors_in_gzip_files_name_the_file_and_line) {
  const std::string p = write_gzip("bad.mtx.gz", general_banner + "% c\n2 2 1\n1 3 1\n");
  EXPECT_THAT([&] { read_matrix_market(p); },
              ::testing::ThrowsMessage<error>(StartsWith(p + ":4: column index '3'")));
}

// Random edits of a valid file: each either parses to a valid matrix or fails with
// sparserl::error naming the source and a line; nothing else escapes, nothing crashes.
TEST_F(matrix_market_test, mutated_files_fail_cleanly) {
  const std::string base =
      "%%MatrixMarket matrix coordinate real symmetric\n% c\n4 4 3\n1 1 1.5\n3 2 -2e3\n4 4 7\n";
  const std::string alphabet = "0123456789 \n\r\t%-+.eExn";
  std::mt19937 rng(1);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string t = base;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0 && !t.empty(); --k) {
      const size_t at = rng() % t.size();
      const char c = rng() % 4 ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng());
      switch (rng() % 3) {
        case 0:
          t[at] = c;
          break;
        case 1:
          t.insert(t.begin() + static_cast<ptrdiff_t>(at), c);
          break;
        default:
          t.erase(at, 1);
      }
    }
    try {
      validate_csr(parse_matrix_market(t.data(), t.size(), "fuzz"));
      ++parsed;
    } catch (const error& e) {
      ASSERT_THAT(e.what(), ::testing::MatchesRegex("fuzz:[0-9]+: .*")) << t;
    }
  }
  EXPECT_GT(parsed, 0);  // some edits (a digit for a digit, extra blanks) stay valid
}

// ---- unreadable files ----------------------------------------------------------------------

TEST_F(matrix_market_test, rejects_a_missing_file) {
  const std::string p = path("absent.mtx");
  EXPECT_THAT([&] { read_matrix_market(p); },
              ::testing::ThrowsMessage<error>(
                  AllOf(StartsWith(p + ": "), HasSubstr("No such file or directory"))));
}

TEST_F(matrix_market_test, rejects_truncated_gzip) {
  const std::string full = write_gzip("full.mtx.gz", general_banner + "2 2 1\n1 1 1\n");
  std::ifstream in(full, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string p = write_text("cut.mtx.gz", bytes.substr(0, bytes.size() - 6));
  EXPECT_THAT(
      [&] { read_matrix_market(p); },
      ::testing::ThrowsMessage<error>(AllOf(StartsWith(p + ": "), HasSubstr("corrupt gzip data"))));
}

TEST_F(matrix_market_test, refuses_files_larger_than_max_bytes) {
  const std::string text = general_banner + "1 1 1\n1 1 1\n" + std::string(5000, '\n');
  mtx_read_options options;
  options.max_bytes = 2000;
  for (const std::string& p : {write_text("big.mtx", text), write_gzip("big.mtx.gz", text)}) {
    EXPECT_THAT([&] { read_matrix_market(p, options); },
                ::testing::ThrowsMessage<error>(
                    AllOf(StartsWith(p + ": "), HasSubstr("limit of 2000 bytes"))));
  }
}

// ---- the parallel scan ---------------------------------------------------------------------

// A body of several MiB, so the scan splits into chunks (one per thread, each >= 1 MiB).
std::string big_text(int64_t entries, int64_t declared, int64_t bad_entry = -1) {
  std::string text = general_banner + "% generated\n1000 1000 " + std::to_string(declared) + "\n";
  std::mt19937 rng(5);
  for (int64_t i = 0; i < entries; ++i) {
    if (i % 1000 == 999) text += "% comment\n";
    text += std::to_string(rng() % 1000 + 1) + " " + std::to_string(rng() % 1000 + 1) + " " +
            (i == bad_entry ? "oops" : std::to_string((rng() % 2001) / 8.0 - 125.0)) + "\n";
  }
  return text;
}

// File line of entry i in big_text: 3 header lines, plus one comment line per 1000 entries.
int64_t big_text_line(int64_t i) { return 3 + i + 1 + (i + 1) / 1000; }

class with_threads {
 public:
  explicit with_threads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~with_threads() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

TEST_F(matrix_market_test, parallel_scan_matches_the_serial_scan) {
  const std::string text = big_text(200000, 200000);
  ASSERT_GT(text.size(), size_t{3} << 20);  // >= 3 chunks of >= 1 MiB
  csr_matrix serial, parallel;
  {
    with_threads one(1);
    serial = parse_matrix_market(text.data(), text.size(), "big");
  }
  {
    with_threads four(4);
    parallel = parse_matrix_market(text.data(), text.size(), "big");
  }
  validate_csr(serial);
  // 200000 random positions in 10^6 cells: about 200000^2 / (2 * 10^6) repeat and are summed.
  EXPECT_NEAR(static_cast<double>(serial.nnz()), 200000 - 20000, 3000);
  expect_identical(serial, parallel);
}

TEST_F(matrix_market_test, parallel_scan_reports_file_line_numbers) {
  with_threads four(4);
  for (const int64_t bad : {int64_t{10}, int64_t{123456}, int64_t{199998}}) {
    const std::string text = big_text(200000, 200000, bad);
    EXPECT_THAT([&] { parse_matrix_market(text.data(), text.size(), "big"); },
                ::testing::ThrowsMessage<error>(
                    StartsWith("big:" + std::to_string(big_text_line(bad)) + ": value 'oops'")));
  }
}

TEST_F(matrix_market_test, parallel_scan_finds_the_first_surplus_entry) {
  with_threads four(4);
  for (const int64_t declared : {int64_t{5}, int64_t{100000}, int64_t{199999}}) {
    const std::string text = big_text(200000, declared);
    EXPECT_THAT([&] { parse_matrix_market(text.data(), text.size(), "big"); },
                ::testing::ThrowsMessage<error>(StartsWith(
                    "big:" + std::to_string(big_text_line(declared)) + ": more entries than the " +
                    std::to_string(declared) + " declared on line 3 (found 200000)")));
  }
  // An error after the surplus started is not the one reported.
  const std::string text = big_text(200000, 1000, 150000);
  EXPECT_THAT([&] { parse_matrix_market(text.data(), text.size(), "big"); },
              ::testing::ThrowsMessage<error>(
                  StartsWith("big:" + std::to_string(big_text_line(1000)) + ": more entries")));
}

TEST_F(matrix_market_test, parallel_scan_counts_missing_entries) {
  with_threads four(4);
  const std::string text = big_text(200000, 200001);
  EXPECT_THAT([&] { parse_matrix_market(text.data(), text.size(), "big"); },
              ::testing::ThrowsMessage<error>(
                  StartsWith("big:" + std::to_string(big_text_line(199999)) +
                             ": file ends after 200000 entries, but line 3 declares 200001")));
}

}  // namespace
}  // namespace sparserl
