// Drives the real `sparserl matrix` binary (SPARSERL_CLI) through a shell, as a user would.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_testing.h"
#include "kernel/format_registry.h"
#include "sparse/features.h"
#include "sparse/formats.h"
#include "sparse/generators.h"
#include "sparse/matrix_market.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::run_result;
using testing::slurp;

class MatrixCli : public testing::cli_test {};

TEST_F(MatrixCli, GenThenInfoJsonAgreesWithFeaturesOfTheFileReadBack) {
  const char* gens[] = {"stencil2d --rows 900 --points 9",
                        "stencil3d --rows 1000",
                        "banded --rows 700 --bandwidth 5",
                        "fem --rows 640 --block 4",
                        "random --rows 300 --cols 500 --density 0.02",
                        "rmat --rows 1024 --avg-degree 6 --seed 9",
                        "circuit --rows 800 --dense-rows 2",
                        "lp --rows 400 --avg-degree 5"};
  for (const std::string args : gens) {
    SCOPED_TRACE(args);
    const std::string file = path("m.mtx");
    const run_result gen = run("matrix gen " + args + " -o " + file);
    ASSERT_EQ(gen.code, 0) << gen.err;
    EXPECT_THAT(gen.out, HasSubstr("wrote " + file));
    const run_result info = run("matrix info " + file + " --json");
    ASSERT_EQ(info.code, 0) << info.err;
    const nlohmann::json reported = nlohmann::json::parse(info.out);
    const matrix_features expected = compute_features(read_matrix_market(file));
    EXPECT_EQ(reported, features_to_json(expected));
    EXPECT_THAT(gen.out, HasSubstr(std::to_string(expected.nnz) + " nonzeros"));
  }
}

TEST_F(MatrixCli, GenMatchesTheLibraryAndIsReproducibleAcrossRuns) {
  ASSERT_EQ(run("matrix gen rmat --rows 2000 --seed 5 -o " + path("a.mtx")).code, 0);
  ASSERT_EQ(run("matrix gen rmat --rows 2000 --seed 5 -o " + path("b.mtx")).code, 0);
  ASSERT_EQ(run("matrix gen rmat --rows 2000 --seed 6 -o " + path("c.mtx")).code, 0);
  EXPECT_EQ(slurp(path("a.mtx")), slurp(path("b.mtx")));
  EXPECT_NE(slurp(path("a.mtx")), slurp(path("c.mtx")));
  generator_spec spec;
  spec.family = "rmat";
  spec.rows = 2000;
  spec.seed = 5;
  const csr_matrix want = generate_matrix(spec), got = read_matrix_market(path("a.mtx"));
  EXPECT_EQ(got.row_ptr, want.row_ptr);
  EXPECT_EQ(got.col_idx, want.col_idx);
  EXPECT_EQ(got.values, want.values);
}

TEST_F(MatrixCli, InfoTableListsEveryFeature) {
  ASSERT_EQ(run("matrix gen banded --rows 200 -o " + path("m.mtx")).code, 0);
  const run_result r = run("matrix info " + path("m.mtx"));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json features =
      features_to_json(compute_features(read_matrix_market(path("m.mtx"))));
  std::map<std::string, std::string> table;  // "name   value" lines
  std::istringstream lines(r.out);
  for (std::string name, value; lines >> name >> value;) table[name] = value;
  EXPECT_EQ(table.size(), features.size());
  for (const auto& [name, value] : features.items()) {
    SCOPED_TRACE(name);
    ASSERT_EQ(table.count(name), 1u);
    if (value.is_number_integer()) {
      EXPECT_EQ(table[name], value.dump());
    } else {
      EXPECT_NEAR(std::stod(table[name]), value.get<double>(), 1e-5 * value.get<double>());
    }
  }
}

TEST_F(MatrixCli, ConvertReportsEachLayout) {
  const std::string file = path("m.mtx");
  ASSERT_EQ(run("matrix gen circuit --rows 600 --dense-rows 1 -o " + file).code, 0);
  const matrix_features f = compute_features(read_matrix_market(file));
  auto convert = [&](const std::string& args) {
    const run_result r = run("matrix convert " + file + " --json " + args);
    EXPECT_EQ(r.code, 0) << args << ": " << r.err;
    return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  };
  const nlohmann::json csr = convert("--format CSR");
  EXPECT_EQ(csr.at("stored_elements"), f.nnz);
  EXPECT_EQ(csr.at("bytes"), 4 * (f.rows + 1) + 8 * f.nnz);
  EXPECT_EQ(convert("--format coo").at("bytes"), 12 * f.nnz);
  const nlohmann::json ell = convert("--format ELL");
  EXPECT_EQ(ell.at("width"), f.row_length_max);
  EXPECT_DOUBLE_EQ(ell.at("padding_ratio").get<double>(), f.ell_padding_ratio);
  // One-row slices pad nothing; wide slices pad towards the longest row of each slice.
  EXPECT_EQ(convert("--format SELL --C 1 --sigma 1").at("stored_elements"), f.nnz);
  const nlohmann::json sell = convert("--format SELL --C 32 --sigma 64");
  EXPECT_EQ(sell.at("slices"), (f.rows + 31) / 32);
  EXPECT_GT(sell.at("stored_elements").get<int64_t>(), f.nnz);
  EXPECT_LT(sell.at("stored_elements").get<int64_t>(), int64_t{f.rows} * f.row_length_max);
  const nlohmann::json bsr = convert("--format BSR --r 4 --c 4");
  EXPECT_NEAR(bsr.at("blocks").get<double>(), f.nnz / (f.block_fill_4 * 16), 1e-6);
  EXPECT_EQ(bsr.at("stored_elements"), bsr.at("blocks").get<int64_t>() * 16);
  EXPECT_EQ(convert("--format DIA").at("diagonals"), f.diagonal_count);
  const nlohmann::json hyb = convert("--format HYB --width 3");
  EXPECT_EQ(hyb.at("ell_elements"), 3 * f.rows);
  EXPECT_EQ(hyb.at("ell_elements").get<int64_t>() + hyb.at("coo_entries").get<int64_t>(),
            hyb.at("stored_elements").get<int64_t>());
  // Without --width: the width the kernel ABI uses (the ceil(rows/3)-th longest row).
  EXPECT_EQ(convert("--format HYB").at("width"), automatic_hyb_width(read_matrix_market(file)));
  // CSR16: row_ptr and col_base (4 bytes a row), 6 bytes a nonzero.
  const nlohmann::json csr16 = convert("--format csr16");
  EXPECT_EQ(csr16.at("stored_elements"), f.nnz);
  EXPECT_EQ(csr16.at("bytes"), 4 * (f.rows + 1) + 4 * f.rows + 6 * f.nnz);
  // RCSR: CSR plus perm and the SpMV scratch buffer (4 bytes a row each), and what the
  // renumbering did to the bandwidth.
  const nlohmann::json rcsr = convert("--format rcsr");
  EXPECT_EQ(rcsr.at("stored_elements"), f.nnz);
  EXPECT_EQ(rcsr.at("bytes"), 4 * (f.rows + 1) + 8 * f.nnz + 4 * f.rows + 4 * f.cols);
  EXPECT_EQ(rcsr.at("bandwidth_original"), f.bandwidth);
  EXPECT_LE(rcsr.at("bandwidth_reordered").get<int64_t>(), f.bandwidth);
  const run_result table = run("matrix convert " + file + " --format SELL");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("padding_ratio"));
  EXPECT_THAT(table.out, HasSubstr("slices"));
}

// issue 19's vocabulary: --matrix FILE as eval and tune take it, SELL's sigma defaults to the
// ABI's (1), -o writes the converted arrays.
TEST_F(MatrixCli, TakesTheFileAsMatrixOptionAndDefaultsToTheAbisSigma) {
  ASSERT_EQ(run("matrix gen powerlaw --rows 400 -o " + path("m.mtx")).code, 0);
  const run_result positional = run("matrix info " + path("m.mtx") + " --json");
  const run_result option = run("matrix info --matrix " + path("m.mtx") + " --json");
  ASSERT_EQ(option.code, 0) << option.err;
  EXPECT_EQ(option.out, positional.out);
  const run_result sell = run("matrix convert --matrix " + path("m.mtx") + " --format SELL --json");
  ASSERT_EQ(sell.code, 0) << sell.err;
  EXPECT_EQ(nlohmann::json::parse(sell.out).at("sigma"), 1);
  expect_one_line_error("matrix info", "give the Matrix Market file (FILE or --matrix FILE)");
  expect_one_line_error(
      "matrix convert " + path("m.mtx") + " --matrix " + path("n.mtx") + " --format CSR",
      "two matrices");
}

TEST_F(MatrixCli, ConvertWritesTheConvertedArraysAsJson) {
  ASSERT_EQ(run("matrix gen rmat --rows 300 --avg-degree 5 -o " + path("m.mtx")).code, 0);
  const csr_matrix a = read_matrix_market(path("m.mtx"));
  const struct {
    const char* options;
    format_kind format;
    std::map<std::string, int64_t> params;
  } cases[] = {{"--format SELL --C 8 --sigma 16", format_kind::sell, {{"C", 8}, {"sigma", 16}}},
               {"--format HYB", format_kind::hyb, {{"width", 0}}},
               {"--format BSR --r 3 --c 2", format_kind::bsr, {{"r", 3}, {"c", 2}}},
               {"--format CSR16", format_kind::csr16, {}},
               {"--format RCSR", format_kind::rcsr, {{"hubs_first", 0}}},
               {"--format RCSR --hubs_first 1", format_kind::rcsr, {{"hubs_first", 1}}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.options);
    const std::string out = path("layout.json");
    const run_result r = run("matrix convert " + path("m.mtx") + " " + c.options + " -o " + out);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("wrote " + out));
    const nlohmann::json j = nlohmann::json::parse(slurp(out));
    const format_info& format = find_format(c.format);
    EXPECT_EQ(j.at("format"), format.name);
    EXPECT_EQ(j.at("rows"), a.rows);
    EXPECT_EQ(j.at("nnz"), a.nnz());
    EXPECT_EQ(j.at("parameters"), nlohmann::json(c.params));
    const format_data want = format.convert(a, c.params, default_max_padded_elements);
    const nlohmann::json& args = j.at("arguments");
    ASSERT_EQ(args.size(), want.args.size());
    for (const kernel_arg& arg : want.args) {
      SCOPED_TRACE(arg.name);
      const nlohmann::json& got = args.at(arg.name);
      if (arg.kind == arg_kind::i32) {
        EXPECT_EQ(got.get<int32_t>(), arg.scalar);
      } else if (arg.kind == arg_kind::i32_array) {
        EXPECT_EQ(got.get<std::vector<int32_t>>(), arg.ints);
      } else if (arg.kind == arg_kind::f32_array) {
        EXPECT_EQ(got.get<std::vector<float>>(), arg.floats);
      } else if (arg.kind == arg_kind::scratch) {
        EXPECT_TRUE(got.is_null());  // the runner's buffer, not part of the layout
      } else {
        EXPECT_EQ(got.get<std::vector<uint16_t>>(), arg.shorts);
      }
    }
  }
  // --json keeps stdout one JSON object; an output that cannot be written is one line.
  const run_result json =
      run("matrix convert " + path("m.mtx") + " --format ELL --json -o " + path("e.json"));
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_NO_THROW(nlohmann::json::parse(json.out));
  expect_one_line_error(
      "matrix convert " + path("m.mtx") + " --format ELL -o " + path("no/dir/e.json"),
      "cannot write the converted matrix");
}

TEST_F(MatrixCli, BadInputsFailWithOneClearLine) {
  const std::string missing = path("missing.mtx");
  expect_one_line_error("matrix info " + missing, "missing.mtx");
  expect_one_line_error("matrix convert " + missing + " --format CSR", "missing.mtx");
  expect_one_line_error("matrix gen nope --rows 10 -o " + path("x.mtx"),
                        "unknown generator family 'nope'");
  expect_one_line_error("matrix gen stencil2d --rows 10 --points 7 -o " + path("x.mtx"), "points");
  EXPECT_FALSE(fs::exists(path("x.mtx")));
  ASSERT_EQ(run("matrix gen random --rows 50 --density 0.1 -o " + path("m.mtx")).code, 0);
  expect_one_line_error("matrix convert " + path("m.mtx") + " --format XYZ",
                        "unknown format 'XYZ'");
  expect_one_line_error("matrix convert " + path("m.mtx") + " --format CSR --C 8", "--C");
  expect_one_line_error("matrix convert " + path("m.mtx") + " --format CSR16 --width 2",
                        "--width applies to --format HYB only");
  expect_one_line_error("matrix convert " + path("m.mtx") + " --format CSR --hubs_first 1",
                        "--hubs_first applies to --format RCSR only");
  expect_one_line_error("matrix convert " + path("m.mtx") + " --format RCSR --hubs_first 2",
                        "hubs_first");
  // A row wider than a 16-bit offset: CSR16 refuses the matrix and says why.
  std::ofstream(path("wide.mtx")) << "%%MatrixMarket matrix coordinate real general\n"
                                  << "2 70000 2\n1 1 1\n1 70000 1\n";
  expect_one_line_error("matrix convert " + path("wide.mtx") + " --format CSR16",
                        "CSR16: row 0 spans columns 0..69999");
  // A matrix that is not square: RCSR cannot renumber it symmetrically.
  expect_one_line_error("matrix convert " + path("wide.mtx") + " --format RCSR",
                        "RCSR: the matrix is 2 x 70000; a symmetric renumbering needs a square "
                        "matrix (use CSR)");
  std::ofstream(path("bad.mtx")) << "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n";
  expect_one_line_error("matrix info " + path("bad.mtx"), "bad.mtx");
}

TEST_F(MatrixCli, FamiliesListsEveryRegisteredFamilyAndGenMakesThem) {
  const run_result list = run("matrix families");
  ASSERT_EQ(list.code, 0) << list.err;
  for (const std::string& family : generator_families()) EXPECT_THAT(list.out, HasSubstr(family));
  const run_result gen =
      run("matrix gen fem_mesh --rows 3000 --dims 3 --dof 3 --order rcm -o " + path("fem.mtx"));
  ASSERT_EQ(gen.code, 0) << gen.err;
  const csr_matrix a = read_matrix_market(path("fem.mtx"));
  EXPECT_EQ(a.rows % 3, 0);
  EXPECT_GT(a.nnz(), 30 * int64_t{a.rows});  // 3 x ~15 neighbours a row
  expect_one_line_error("matrix gen knn --rows 100 --order sideways -o " + path("x.mtx"),
                        "sideways");
}

TEST_F(MatrixCli, HelpWorksOnEverySubcommand) {
  for (const char* args : {"--help", "matrix --help", "matrix info --help", "matrix gen --help",
                           "matrix convert --help"}) {
    SCOPED_TRACE(args);
    const run_result r = run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("Usage:"));
  }
  EXPECT_THAT(run("matrix gen --help").out, HasSubstr("rmat"));
  EXPECT_THAT(run("matrix convert --help").out, HasSubstr("SELL"));
}

}  // namespace
}  // namespace sparserl
