// Drives the real `sparserl export` (SPARSERL_CLI) and compiles what it writes with nvcc, as an
// application would (SPARSERL_NVCC, or $NVCC; the tests that need it skip without it): an expert
// program of every (op, format) exported and built into examples/export/main.cu, every format's
// host conversion in the header checked against the harness's arrays, and the refusals. Running
// the exported kernels needs a GPU: scripts/gpu-export.sh.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_testing.h"
#include "kernel/abi.h"
#include "kernel/completion.h"
#include "kernel/expert_library.h"
#include "kernel/format_registry.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::run_result;
using testing::slurp;

std::string nvcc_path() {
  const char* env = std::getenv("NVCC");
  const std::string path = env != nullptr ? env : SPARSERL_NVCC;
  return !path.empty() && access(path.c_str(), X_OK) == 0 ? path : "";
}

// nvcc as the example's README builds it, warnings on; returns its exit code (output in `log`).
int run_nvcc(const std::string& args, const std::string& log) {
  const std::string command = nvcc_path() + " -std=c++17 -arch=sm_90 -Xcompiler -Wall,-Wextra " +
                              args + " >" + log + " 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

csr_matrix generated(const std::string& family, int32_t rows, uint64_t seed = 1) {
  generator_spec spec = default_spec(family);
  spec.rows = rows;
  spec.seed = seed;
  return generate_matrix(spec);
}

// One expert program per format the library has for `op`: the first of each format in the spaces
// of matrices that suit different formats (banded: DIA, HYB; FEM blocks: BSR; power-law: COO).
std::map<format_kind, expert_config> one_config_per_format(sparse_op op) {
  std::map<format_kind, expert_config> out;
  for (const csr_matrix& a : {generated("banded", 700), generated("fem", 640),
                              generated("rmat", 2048), generated("random", 500)})
    for (const expert_config& c : expert_space(op, compute_features(a), 16))
      out.emplace(c.format, c);
  return out;
}

std::set<format_kind> formats_with_templates(sparse_op op) {
  std::set<format_kind> out;
  for (const expert_template& t : expert_templates())
    if (t.op == op) out.insert(t.format);
  return out;
}

class ExportCli : public testing::cli_test {
 protected:
  std::string example() const {
    return std::string(SPARSERL_SOURCE_DIR) + "/examples/export/main.cu";
  }
};

TEST_F(ExportCli, AnExpertProgramOfEveryFormatExportsAndBuildsIntoTheExample) {
  if (nvcc_path().empty()) GTEST_SKIP() << "no nvcc (set NVCC)";
  for (sparse_op op : {sparse_op::spmv, sparse_op::spmm}) {
    const std::map<format_kind, expert_config> configs = one_config_per_format(op);
    std::set<format_kind> covered;
    for (const auto& entry : configs) covered.insert(entry.first);
    EXPECT_EQ(covered, formats_with_templates(op)) << op_name(op);
    for (const auto& [format, config] : configs) {
      SCOPED_TRACE(config.describe());
      write_file(path("best.cu"), emit_program(config).to_text());
      const std::string header = path("kernel.cuh");
      const run_result r =
          run("export --program " + path("best.cu") + " --op " + op_name(op) + " -o " + header);
      ASSERT_EQ(r.code, 0) << r.err;
      EXPECT_THAT(r.out, HasSubstr("wrote " + header));
      EXPECT_THAT(r.out, HasSubstr(std::string("sparserl_export::") + op_name(op) + "_kernel"));
      const std::string text = slurp(header);
      EXPECT_THAT(text, HasSubstr(emit_program(config).to_text().substr(0, 8)));  // "FORMAT: "
      EXPECT_THAT(text, HasSubstr(emit_program(config).source));
      const std::string log = path("nvcc.log");
      EXPECT_EQ(run_nvcc("-I" + dir_.string() + " -DSPARSERL_EXPORT_HEADER='\"kernel.cuh\"' -c " +
                             example() + " -o " + path("example.o"),
                         log),
                0)
          << slurp(log);
    }
  }
}

// ---- the header's host conversion against the harness's --------------------------------------

// A program of `format_line` whose entry points do nothing: only its conversion is looked at.
std::string empty_program(const std::string& format_line, sparse_op op) {
  const std::optional<format_kind> format =
      parse_format(format_line.substr(0, format_line.find(' ')));
  std::string text = "FORMAT: " + format_line + "\nLAUNCH: block=128 rows_per_block=128\n";
  for (const entry_point& e : entry_points(op, *format))
    text += entry_signature(op, *format, e.name) + " {}\n";
  return text;
}

// Prints what convert_from_csr builds for each matrix file named on its command line.
std::string conversion_driver(format_kind format) {
  std::string prints;
  for (const format_slot& s : find_format(format).slots)  // a scratch slot has no host array
    if (s.kind != arg_kind::scratch)
      prints += "      print(\"" + std::string(s.name) + "\", f." + s.name + ");\n";
  return R"(#include "kernel.cuh"
#include <cstdio>
#include <fstream>
#include <type_traits>
template <typename T>
void print(const char* name, const std::vector<T>& values) {
  std::printf("%s %zu", name, values.size());
  for (const T& v : values) {
    if (std::is_floating_point<T>::value) std::printf(" %.9g", static_cast<double>(v));
    else std::printf(" %lld", static_cast<long long>(v));
  }
  std::printf("\n");
}
void print(const char* name, long long value) { std::printf("%s 1 %lld\n", name, value); }
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    int rows = 0, cols = 0, nnz = 0;
    in >> rows >> cols >> nnz;
    std::vector<int> row_ptr(rows + 1), col_idx(nnz);
    std::vector<float> values(nnz);
    for (int& v : row_ptr) in >> v;
    for (int& v : col_idx) in >> v;
    for (float& v : values) in >> v;
    std::printf("matrix %s\n", argv[i]);
    try {
      using namespace sparserl_export::detail;
      const format_arrays f = convert_from_csr(
          read_csr(rows, cols, nnz, row_ptr.data(), col_idx.data(), values.data()));
)" + prints +
         R"(      print("work_rows", f.work_rows);
      print("work_nnz", f.work_nnz);
    } catch (const std::exception& e) {
      std::printf("error %s\n", e.what());
    }
  }
}
)";
}

std::string csr_text(const csr_matrix& a) {
  std::ostringstream out;
  out << a.rows << ' ' << a.cols << ' ' << a.nnz() << '\n';
  for (int32_t v : a.row_ptr) out << v << ' ';
  out << '\n';
  for (int32_t v : a.col_idx) out << v << ' ';
  out << '\n';
  char text[32];
  for (float v : a.values) {
    std::snprintf(text, sizeof text, "%.9g ", static_cast<double>(v));
    out << text;
  }
  out << '\n';
  return out.str();
}

// What the harness builds for `a` (build_arguments), printed as the driver prints it.
std::string harness_arrays(const kernel_program& program, const csr_matrix& a) {
  std::ostringstream out;
  format_arguments args;
  try {
    args = build_arguments(sparse_op::spmv, a, program, 1);
  } catch (const error&) {
    return "error\n";
  }
  char text[32];
  for (const kernel_arg& arg : args.args) {
    if (arg.name == "rows" || arg.name == "cols" || arg.kind == arg_kind::input ||
        arg.kind == arg_kind::output || arg.kind == arg_kind::scratch)
      continue;
    out << arg.name;
    switch (arg.kind) {
      case arg_kind::i32:
        out << " 1 " << arg.scalar;
        break;
      case arg_kind::i32_array:
        out << ' ' << arg.ints.size();
        for (int32_t v : arg.ints) out << ' ' << v;
        break;
      case arg_kind::u16_array:
        out << ' ' << arg.shorts.size();
        for (uint16_t v : arg.shorts) out << ' ' << v;
        break;
      default:
        out << ' ' << arg.floats.size();
        for (float v : arg.floats) {
          std::snprintf(text, sizeof text, " %.9g", static_cast<double>(v));
          out << text;
        }
    }
    out << '\n';
  }
  out << "work_rows 1 " << args.work_rows << "\nwork_nnz 1 " << args.work_nnz << '\n';
  return out.str();
}

// The driver's report split per matrix; an error keeps only its first word.
std::vector<std::string> per_matrix(const std::string& report) {
  std::vector<std::string> out;
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("matrix ", 0) == 0) {
      out.emplace_back();
      continue;
    }
    if (out.empty()) continue;
    out.back() += (line.rfind("error ", 0) == 0 ? std::string("error") : line) + "\n";
  }
  return out;
}

// Line by line (one array a line), showing only the start of the first that differs.
void expect_same_arrays(const std::string& got, const std::string& want) {
  std::istringstream got_lines(got), want_lines(want);
  std::string g, w;
  while (std::getline(want_lines, w)) {
    if (!std::getline(got_lines, g)) g = "(nothing)";
    if (g != w) {
      ADD_FAILURE() << "the header built\n  " << g.substr(0, 300) << "\nthe harness built\n  "
                    << w.substr(0, 300);
      return;
    }
  }
  EXPECT_FALSE(std::getline(got_lines, g)) << "the header built more: " << g.substr(0, 300);
}

TEST_F(ExportCli, TheHeadersConversionBuildsWhatTheHarnessBuildsForEveryFormat) {
  if (nvcc_path().empty()) GTEST_SKIP() << "no nvcc (set NVCC)";
  csr_matrix small;  // empty rows first, in the middle and last; a full row
  small.rows = 7;
  small.cols = 5;
  small.row_ptr = {0, 0, 2, 7, 7, 8, 10, 10};
  small.col_idx = {1, 4, 0, 1, 2, 3, 4, 2, 0, 3};
  small.values = {1.5f, -2, 3, 0.1f, 5, 6, -7, 8, 9, 1e-7f};
  csr_matrix wide;  // a row spanning more columns than CSR16 holds
  wide.rows = 2;
  wide.cols = 70000;
  wide.row_ptr = {0, 2, 3};
  wide.col_idx = {3, 69999, 100};
  wide.values = {1, 2, 3};
  csr_matrix tall;  // one long row: ELL and DIA would pad past the harness's limit
  tall.rows = 100000;
  tall.cols = 300;
  tall.row_ptr.assign(tall.rows + 1, 200);
  tall.row_ptr[0] = 0;
  for (int32_t c = 0; c < 200; ++c) {
    tall.col_idx.push_back(c);
    tall.values.push_back(static_cast<float>(c) / 7);
  }
  generator_spec rect = default_spec("random");
  rect.rows = 300;
  rect.cols = 500;
  rect.density = 0.02;
  // RCSR's reverse Cuthill-McKee must come out the same, ties included: graphs in a random order
  // (meshes: many equal degrees; power-law: vertices finding dozens of new neighbours at once, past
  // std::sort's insertion-sort threshold), several components, isolated nodes.
  std::vector<csr_matrix> random_order;
  for (const char* family : {"mesh2d", "knn", "powerlaw", "road"}) {
    generator_spec s = default_spec(family);
    s.rows = 1500;
    s.order = "random";
    s.seed = 4;
    random_order.push_back(generate_matrix(s));
  }
  csr_matrix islands;  // two components and two isolated nodes, one of them with a diagonal
  islands.rows = islands.cols = 6;
  islands.row_ptr = {0, 1, 2, 3, 4, 4, 6};
  islands.col_idx = {5, 3, 2, 1, 0, 5};
  islands.values = {1, 2, 3, 4, 5, 6};
  const std::vector<csr_matrix> matrices = {small,
                                            wide,
                                            tall,
                                            generate_matrix(rect),
                                            generated("rmat", 1024, 9),
                                            generated("banded", 200),
                                            generated("fem", 96),
                                            random_order[0],
                                            random_order[1],
                                            random_order[2],
                                            random_order[3],
                                            islands,
                                            csr_from_triplets(1, 1, {{0, 0, 2.0f}})};
  std::string files;
  for (size_t i = 0; i < matrices.size(); ++i) {
    const std::string file = path("m" + std::to_string(i) + ".txt");
    write_file(file, csr_text(matrices[i]));
    files += " " + file;
  }

  const char* formats[] = {"CSR",
                           "COO",
                           "ELL",
                           "SELL C=4 sigma=6",
                           "SELL C=32 sigma=1",
                           "BSR r=3 c=2",
                           "DIA",
                           "HYB",
                           "HYB width=2",
                           "CSR16",
                           "RCSR",
                           "RCSR hubs_first=1"};
  for (const std::string format_line : formats) {
    SCOPED_TRACE(format_line);
    const std::string text = empty_program(format_line, sparse_op::spmv);
    write_file(path("p.cu"), text);
    const run_result r = run("export --program " + path("p.cu") + " -o " + path("kernel.cuh"));
    ASSERT_EQ(r.code, 0) << r.err;
    const kernel_program program = *parse_completion(text, sparse_op::spmv).program;
    write_file(path("driver.cu"), conversion_driver(program.format));
    const std::string log = path("nvcc.log");
    ASSERT_EQ(
        run_nvcc("-I" + dir_.string() + " " + path("driver.cu") + " -o " + path("driver"), log), 0)
        << slurp(log);
    const std::string report = path("report.txt");
    ASSERT_EQ(std::system((path("driver") + files + " >" + report).c_str()), 0);
    const std::vector<std::string> got = per_matrix(slurp(report));
    ASSERT_EQ(got.size(), matrices.size()) << slurp(report);
    for (size_t i = 0; i < matrices.size(); ++i) {
      SCOPED_TRACE("matrix " + std::to_string(i));
      expect_same_arrays(got[i], harness_arrays(program, matrices[i]));
    }
  }
}

// ---- choosing the program, and the refusals ---------------------------------------------------

TEST_F(ExportCli, ExportsTheExpertProgramForAMatrixAndSuppliesAMissingFormatLine) {
  ASSERT_EQ(run("matrix gen banded --rows 300 -o " + path("a.mtx")).code, 0);
  run_result r = run("export --matrix " + path("a.mtx") + " -o " + path("h.cuh"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("the expert program"));
  r = run("export --matrix " + path("a.mtx") + " --matrix-format sell --op spmm -o " +
          path("h.cuh"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("spmm SELL program"));
  EXPECT_THAT(slurp(path("h.cuh")), HasSubstr("class spmm_kernel"));
  EXPECT_THAT(slurp(path("h.cuh")), HasSubstr("#define SPARSERL_EXPORT_SPMM 1"));

  // A file of LAUNCH lines and a kernel: --matrix-format gives the FORMAT line.
  const std::string program = empty_program("ELL", sparse_op::spmv);
  write_file(path("k.cu"), program.substr(program.find('\n') + 1));
  r = run("export --program " + path("k.cu") + " --matrix-format ELL -o " + path("e.cuh"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(slurp(path("e.cuh")), HasSubstr("//   FORMAT: ELL\n"));
}

TEST_F(ExportCli, RefusesBadInputWithOneLineAndWritesNothing) {
  write_file(path("csr.cu"), empty_program("CSR", sparse_op::spmv));
  write_file(path("bad.cu"), "FORMAT: CSR\nLAUNCH: block=64 rows_per_block=1\nint x;\n");
  std::string hostile = empty_program("CSR", sparse_op::spmv);
  hostile.replace(hostile.rfind("{}"), 2, "{ asm(\"trap;\"); }");
  write_file(path("asm.cu"), hostile);
  ASSERT_EQ(run("matrix gen banded --rows 300 -o " + path("a.mtx")).code, 0);
  const std::string out = " -o " + path("out.cuh");
  const std::string csr = " --program " + path("csr.cu");
  expect_one_line_error("export" + csr + " --matrix-format FOO" + out, "unknown format");
  expect_one_line_error("export --program " + path("bad.cu") + out, "missing entry point spmv_csr");
  expect_one_line_error("export --program " + path("nothing.cu") + out, "cannot open");
  expect_one_line_error("export" + csr + " --matrix-format ELL" + out, "not --matrix-format ELL");
  expect_one_line_error("export" + csr + " --op spmm" + out, "not a spmm program");
  expect_one_line_error("export" + csr + " --op spmx" + out, "--op spmx");
  expect_one_line_error("export --program " + path("asm.cu") + out, "source screen");
  expect_one_line_error("export" + out, "give --program FILE");
  expect_one_line_error("export" + csr + " --matrix " + path("a.mtx") + out, "one of them");
  expect_one_line_error("export --matrix " + path("a.mtx") + " --matrix-format DIA --op spmm" + out,
                        "offers no DIA spmm program");
  EXPECT_FALSE(fs::exists(path("out.cuh")));
  expect_one_line_error("export" + csr + " -o " + path("no/such/dir/k.cuh"), "cannot write");
  EXPECT_FALSE(fs::exists(path("no")));
}

}  // namespace
}  // namespace sparserl
