// The ABI's argument lists are checked by running each format's data through C++ versions of the
// kernels written only from docs/kernel-abi.md's index formulas, against spmv_reference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <regex>

#include "kernel/abi.h"
#include "kernel/format_registry.h"
#include "kernel/program_testing.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

using testing::all_formats;
using testing::all_ops;
using ::testing::HasSubstr;

// Rows of random length (some empty, one long), columns random; rectangular.
csr_matrix random_matrix(int32_t rows, int32_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<triplet> t;
  for (int32_t r = 0; r < rows; ++r) {
    const int len = (r % 7 == 3) ? 0 : static_cast<int>(rng() % 9);
    for (int i = 0; i < len; ++i)
      t.push_back({r, static_cast<int32_t>(rng() % cols),
                   static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 256.0f});
  }
  for (int32_t c = 0; c < cols; c += 2) t.push_back({rows / 2, c, 0.5f});  // a long row
  return csr_from_triplets(rows, cols, std::move(t));
}

kernel_program program_of(format_kind f, std::map<std::string, int64_t> params = {}) {
  kernel_program p;
  p.format = f;
  p.format_params = std::move(params);
  return p;
}

// Names are const char* so no temporary std::string is bound (GCC 13's -Wdangling-reference).
const kernel_arg& arg(const format_arguments& a, const char* name) {
  for (const kernel_arg& x : a.args)
    if (x.name == name) return x;
  throw error(std::string("no argument ") + name);
}
int32_t scalar(const format_arguments& a, const char* name) { return arg(a, name).scalar; }
const std::vector<int32_t>& ints(const format_arguments& a, const char* n) {
  return arg(a, n).ints;
}
const std::vector<float>& floats(const format_arguments& a, const char* n) {
  return arg(a, n).floats;
}
const std::vector<uint16_t>& shorts(const format_arguments& a, const char* n) {
  return arg(a, n).shorts;
}

// y = A x from the format arrays, following the documented layouts.
std::vector<double> emulate_spmv(format_kind f, const format_arguments& a, int32_t rows,
                                 int32_t cols, const std::vector<float>& x) {
  std::vector<double> y(static_cast<size_t>(rows), 0.0);
  auto ell = [&](const std::vector<int32_t>& col, const std::vector<float>& val, int32_t width) {
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t j = 0; j < width; ++j) {
        const size_t at = static_cast<size_t>(j) * rows + r;
        if (col.at(at) >= 0) y[r] += double(val.at(at)) * x.at(col[at]);
      }
  };
  auto coo = [&](const std::vector<int32_t>& ri, const std::vector<int32_t>& ci,
                 const std::vector<float>& val, int32_t nnz) {
    for (int32_t i = 0; i < nnz; ++i) y[ri.at(i)] += double(val.at(i)) * x.at(ci.at(i));
  };
  switch (f) {
    case format_kind::csr: {
      const auto &rp = ints(a, "row_ptr"), &ci = ints(a, "col_idx");
      for (int32_t r = 0; r < rows; ++r)
        for (int32_t i = rp.at(r); i < rp.at(r + 1); ++i)
          y[r] += double(floats(a, "values").at(i)) * x.at(ci.at(i));
      break;
    }
    case format_kind::coo:
      coo(ints(a, "row_idx"), ints(a, "col_idx"), floats(a, "values"), scalar(a, "nnz"));
      break;
    case format_kind::ell:
      ell(ints(a, "col_idx"), floats(a, "values"), scalar(a, "width"));
      break;
    case format_kind::sell: {
      const int32_t C = scalar(a, "slice_height");
      const auto &sp = ints(a, "slice_ptr"), &sw = ints(a, "slice_width"), &perm = ints(a, "perm");
      const auto& ci = ints(a, "col_idx");
      EXPECT_EQ(static_cast<int32_t>(sp.size()), scalar(a, "num_slices") + 1);
      for (int32_t pos = 0; pos < rows; ++pos) {
        const int32_t s = pos / C, lane = pos % C;
        double sum = 0;
        for (int32_t j = 0; j < sw.at(s); ++j) {
          const size_t at = static_cast<size_t>(sp.at(s)) + static_cast<size_t>(j) * C + lane;
          if (ci.at(at) >= 0) sum += double(floats(a, "values").at(at)) * x.at(ci[at]);
        }
        y[perm.at(pos)] = sum;
      }
      break;
    }
    case format_kind::bsr: {
      const int32_t r = scalar(a, "r"), c = scalar(a, "c");
      const auto &bp = ints(a, "block_row_ptr"), &bc = ints(a, "block_col_idx");
      for (int32_t br = 0; br < scalar(a, "block_rows"); ++br)
        for (int32_t b = bp.at(br); b < bp.at(br + 1); ++b)
          for (int32_t i = 0; i < r; ++i)
            for (int32_t j = 0; j < c; ++j) {
              const int64_t row = int64_t{br} * r + i, col = int64_t{bc.at(b)} * c + j;
              if (row < rows && col < cols)
                y[row] += double(floats(a, "values").at((size_t(b) * r + i) * c + j)) * x[col];
            }
      break;
    }
    case format_kind::dia: {
      const auto& off = ints(a, "offsets");
      for (int32_t d = 0; d < scalar(a, "num_diags"); ++d)
        for (int32_t r = 0; r < rows; ++r) {
          const int64_t col = int64_t{r} + off.at(d);
          if (col >= 0 && col < cols)
            y[r] += double(floats(a, "values").at(size_t(d) * rows + r)) * x[col];
        }
      break;
    }
    case format_kind::hyb:
      ell(ints(a, "ell_col_idx"), floats(a, "ell_values"), scalar(a, "width"));
      coo(ints(a, "coo_row_idx"), ints(a, "coo_col_idx"), floats(a, "coo_values"),
          scalar(a, "coo_nnz"));
      break;
    case format_kind::csr16: {
      const auto &rp = ints(a, "row_ptr"), &base = ints(a, "col_base");
      const auto& offset = shorts(a, "col_offset");
      EXPECT_EQ(static_cast<int32_t>(offset.size()), scalar(a, "nnz"));
      for (int32_t r = 0; r < rows; ++r)
        for (int32_t i = rp.at(r); i < rp.at(r + 1); ++i)
          y[r] += double(floats(a, "values").at(i)) * x.at(base.at(r) + offset.at(i));
      break;
    }
    case format_kind::rcsr: {
      // The two entry points as documented: gather x into the new numbering, then B work, with
      // row p of B written to y[perm[p]]. The scratch slot is a placeholder (no data).
      EXPECT_EQ(arg(a, "work").kind, arg_kind::scratch);
      EXPECT_FALSE(arg(a, "work").is_array());
      EXPECT_EQ(arg(a, "work").array_bytes(), 0u);
      EXPECT_EQ(rows, cols);
      const auto &perm = ints(a, "perm"), &rp = ints(a, "row_ptr"), &ci = ints(a, "col_idx");
      EXPECT_EQ(static_cast<int32_t>(ci.size()), scalar(a, "nnz"));
      std::vector<double> work(static_cast<size_t>(cols));
      for (int32_t p = 0; p < rows; ++p) work[p] = x.at(perm.at(p));
      for (int32_t p = 0; p < rows; ++p)
        for (int32_t i = rp.at(p); i < rp.at(p + 1); ++i)
          y.at(perm.at(p)) += double(floats(a, "values").at(i)) * work.at(ci.at(i));
      break;
    }
    case format_kind::hcoo: {
      // Negative columns name a hub slot: the init gathers work[slot] = x[hub_cols[slot]].
      EXPECT_EQ(arg(a, "work").kind, arg_kind::scratch);
      const auto& hubs = ints(a, "hub_cols");
      EXPECT_EQ(static_cast<int32_t>(hubs.size()), scalar(a, "num_hubs"));
      std::vector<float> work;
      for (int32_t c : hubs) work.push_back(x.at(c));
      const auto &ri = ints(a, "row_idx"), &ci = ints(a, "col_idx");
      for (int32_t i = 0; i < scalar(a, "nnz"); ++i) {
        const int32_t c = ci.at(i);
        y[ri.at(i)] += double(floats(a, "values").at(i)) * (c >= 0 ? x.at(c) : work.at(~c));
      }
      break;
    }
  }
  return y;
}

void expect_close(const std::vector<double>& got, const std::vector<float>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " row " << i;
}

// The argument names of a signature, in order.
std::vector<std::string> signature_names(const std::string& sig) {
  std::vector<std::string> out;
  const std::regex name(R"((\w+)\s*[,)])");
  for (auto it = std::sregex_iterator(sig.begin(), sig.end(), name); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

TEST(abi, entry_points_and_their_work_split) {
  auto names = [](sparse_op op, format_kind f) {
    std::vector<std::string> out;
    for (const entry_point& e : entry_points(op, f))
      out.push_back(e.name + (e.nnz_work ? "+nnz" : ""));
    return out;
  };
  EXPECT_THAT(names(sparse_op::spmv, format_kind::csr), ::testing::ElementsAre("spmv_csr+nnz"));
  EXPECT_THAT(names(sparse_op::spmv, format_kind::coo),
              ::testing::ElementsAre("spmv_coo_init", "spmv_coo+nnz"));
  EXPECT_THAT(names(sparse_op::spmm, format_kind::hyb),
              ::testing::ElementsAre("spmm_hyb_ell", "spmm_hyb_coo+nnz"));
  EXPECT_THAT(names(sparse_op::spmm, format_kind::sell), ::testing::ElementsAre("spmm_sell"));
  for (format_kind f : {format_kind::ell, format_kind::bsr, format_kind::dia})
    EXPECT_EQ(names(sparse_op::spmv, f).size(), 1u);
  EXPECT_THAT(names(sparse_op::spmm, format_kind::csr16), ::testing::ElementsAre("spmm_csr16+nnz"));
  EXPECT_THAT(names(sparse_op::spmv, format_kind::rcsr),
              ::testing::ElementsAre("spmv_rcsr_gather", "spmv_rcsr+nnz"));
  EXPECT_THAT(names(sparse_op::spmm, format_kind::rcsr),
              ::testing::ElementsAre("spmm_rcsr_gather", "spmm_rcsr+nnz"));
}

TEST(abi, rcsr_signature_passes_a_writable_scratch_buffer) {
  EXPECT_EQ(entry_signature(sparse_op::spmv, format_kind::rcsr, "spmv_rcsr"),
            "extern \"C\" __global__ void spmv_rcsr(int rows, int cols, int nnz, "
            "const int* __restrict__ perm, const int* __restrict__ row_ptr, "
            "const int* __restrict__ col_idx, const float* __restrict__ values, "
            "float* __restrict__ work, const float* __restrict__ x, float* __restrict__ y)");
}

// A symmetric renumbering needs a square matrix: the program fails to build, in one line.
TEST(abi, rcsr_refuses_a_matrix_that_is_not_square) {
  const csr_matrix wide = csr_from_triplets(100, 120, {{0, 119, 1.0f}, {99, 3, 2.0f}});
  for (sparse_op op : all_ops) {
    try {
      build_arguments(op, wide, program_of(format_kind::rcsr), 4);
      FAIL() << "RCSR accepted a 100 x 120 matrix";
    } catch (const error& e) {
      EXPECT_EQ(std::string(e.what()),
                "RCSR: the matrix is 100 x 120; a symmetric renumbering needs a square matrix "
                "(use CSR)");
    }
  }
}

// The scratch buffer is memory the format needs: it counts in footprint_bytes, input-sized.
TEST(abi, rcsr_footprint_counts_the_scratch_buffer) {
  const csr_matrix a = random_matrix(50, 50, 5);
  const int64_t arrays = 4 * (int64_t{a.rows} + (a.rows + 1) + 2 * a.nnz());  // perm, CSR of B
  EXPECT_EQ(build_arguments(sparse_op::spmv, a, program_of(format_kind::rcsr), 1).footprint_bytes,
            arrays + 4 * 50);
  EXPECT_EQ(build_arguments(sparse_op::spmm, a, program_of(format_kind::rcsr), 8).footprint_bytes,
            arrays + 4 * 50 * 8);
}

// docs/kernel-abi.md's table of entry points holds every format of the registry, for both ops,
// with the entry points in launch order, (nnz) where nnz_per_block applies, and the exact
// argument list (without __restrict__), so a new format cannot go undocumented.
TEST(abi, the_documented_table_matches_every_registered_format) {
  std::ifstream in(SPARSERL_SOURCE_DIR "/docs/kernel-abi.md");
  ASSERT_TRUE(in) << "docs/kernel-abi.md not found";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (sparse_op op : all_ops)
    for (const format_info& f : format_registry()) {
      std::string entries, args;
      for (const entry_point& e : entry_points(op, f.kind))
        entries += (entries.empty() ? "`" : ", `") + e.name + "`" + (e.nnz_work ? " (nnz)" : "");
      const std::string sig = entry_signature(op, f.kind, entry_points(op, f.kind).front().name);
      args = sig.substr(sig.find('(') + 1, sig.rfind(')') - sig.find('(') - 1);
      args = std::regex_replace(args, std::regex(R"(__restrict__ )"), "");
      const std::string row = "| " + std::string(op_name(op)) + " | " + f.name + " | " + entries +
                              " | `" + args + "` |";
      EXPECT_NE(doc.find(row), std::string::npos) << "docs/kernel-abi.md lacks the row\n" << row;
    }
}

TEST(abi, csr16_signature_passes_16_bit_column_offsets) {
  EXPECT_EQ(entry_signature(sparse_op::spmv, format_kind::csr16, "spmv_csr16"),
            "extern \"C\" __global__ void spmv_csr16(int rows, int cols, int nnz, "
            "const int* __restrict__ row_ptr, const int* __restrict__ col_base, "
            "const unsigned short* __restrict__ col_offset, const float* __restrict__ values, "
            "const float* __restrict__ x, float* __restrict__ y)");
}

// A row spanning more than 65535 columns cannot be held: the program fails to build, saying which
// row and why, instead of wrapping the offset.
TEST(abi, csr16_refuses_a_row_wider_than_16_bits) {
  const csr_matrix fits =
      csr_from_triplets(3, 70000, {{0, 10, 1.0f}, {0, 65545, 2.0f}, {2, 69999, 3.0f}});
  const format_arguments args =
      build_arguments(sparse_op::spmv, fits, program_of(format_kind::csr16), 1);
  EXPECT_EQ(shorts(args, "col_offset"), (std::vector<uint16_t>{0, 65535, 0}));
  EXPECT_EQ(ints(args, "col_base"), (std::vector<int32_t>{10, 0, 69999}));
  const csr_matrix wide = csr_from_triplets(3, 70000, {{1, 0, 1.0f}, {1, 65536, 2.0f}});
  try {
    build_arguments(sparse_op::spmv, wide, program_of(format_kind::csr16), 1);
    FAIL() << "CSR16 accepted a row spanning 65536 columns";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("CSR16: row 1 spans columns 0..65536"));
    EXPECT_THAT(e.what(), HasSubstr("65535"));
  }
}

TEST(abi, signatures_spell_the_documented_argument_lists) {
  EXPECT_EQ(entry_signature(sparse_op::spmv, format_kind::csr, "spmv_csr"),
            "extern \"C\" __global__ void spmv_csr(int rows, int cols, int nnz, "
            "const int* __restrict__ row_ptr, const int* __restrict__ col_idx, "
            "const float* __restrict__ values, const float* __restrict__ x, "
            "float* __restrict__ y)");
  EXPECT_EQ(entry_signature(sparse_op::spmm, format_kind::dia, "spmm_dia"),
            "extern \"C\" __global__ void spmm_dia(int rows, int cols, int k, int num_diags, "
            "const int* __restrict__ offsets, const float* __restrict__ values, "
            "const float* __restrict__ B, float* __restrict__ C)");
  // SELL's slice height is not called C: SpMM's output is.
  const auto sell = signature_names(entry_signature(sparse_op::spmm, format_kind::sell, "s"));
  EXPECT_EQ(std::count(sell.begin(), sell.end(), "C"), 1);
}

TEST(abi, built_arguments_follow_the_signature_order) {
  const csr_matrix rectangular = random_matrix(37, 29, 1), square = random_matrix(37, 37, 1);
  for (sparse_op op : all_ops)
    for (format_kind f : all_formats) {
      const csr_matrix& a = f == format_kind::rcsr ? square : rectangular;  // RCSR: square only
      const format_arguments args = build_arguments(op, a, program_of(f), 3);
      std::vector<std::string> names;
      for (const kernel_arg& x : args.args) names.push_back(x.name);
      const std::string entry = entry_points(op, f).front().name;
      EXPECT_EQ(names, signature_names(entry_signature(op, f, entry))) << format_name(f);
      EXPECT_EQ(args.args.front().scalar, 37);
      EXPECT_EQ(args.args[1].scalar, a.cols);
      EXPECT_EQ(args.args.back().kind, arg_kind::output);
      EXPECT_EQ(args.args[args.args.size() - 2].kind, arg_kind::input);
      if (op == sparse_op::spmm) {
        EXPECT_EQ(scalar(args, "k"), 3);
      }
      int64_t bytes = 0;
      for (const kernel_arg& x : args.args)
        bytes +=
            4 * int64_t(x.ints.size() + x.floats.size()) + 2 * int64_t(x.shorts.size()) +
            (x.kind == arg_kind::scratch ? 4 * int64_t{a.cols} * (op == sparse_op::spmm ? 3 : 1)
                                         : 0);
      EXPECT_EQ(args.footprint_bytes, bytes);
      EXPECT_GE(bytes, 4 * a.nnz());
    }
}

TEST(abi, every_format_computes_spmv_through_its_documented_layout) {
  struct shape {
    int32_t rows, cols;
  };
  const std::vector<std::map<std::string, int64_t>> sell_params = {
      {}, {{"C", 4}, {"sigma", 16}}, {{"c", 1}, {"sigma", 1000}}};
  const std::vector<std::map<std::string, int64_t>> bsr_params = {
      {}, {{"r", 3}, {"c", 5}}, {{"r", 1}, {"c", 1}}};
  const std::vector<std::map<std::string, int64_t>> hyb_params = {
      {}, {{"width", 1}}, {{"width", 100}}};
  const std::vector<std::map<std::string, int64_t>> hcoo_params = {
      {}, {{"hubs", 0}}, {{"hubs", 1}}, {{"hubs", 5}}};
  for (shape s : {shape{1, 1}, shape{50, 50}, shape{101, 37}, shape{23, 300}, shape{200, 200}}) {
    const csr_matrix a = random_matrix(s.rows, s.cols, s.rows * 31 + s.cols);
    std::vector<float> x(static_cast<size_t>(s.cols));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + float(i % 13) / 8.0f;
    std::vector<float> want(static_cast<size_t>(s.rows));
    spmv_reference(a, x.data(), want.data());
    for (format_kind f : all_formats) {
      if (f == format_kind::rcsr && s.rows != s.cols) {
        EXPECT_THROW(build_arguments(sparse_op::spmv, a, program_of(f), 1), error);
        continue;
      }
      std::vector<std::map<std::string, int64_t>> variants = {{}};
      if (f == format_kind::sell) variants = sell_params;
      if (f == format_kind::bsr) variants = bsr_params;
      if (f == format_kind::hyb) variants = hyb_params;
      if (f == format_kind::hcoo) variants = hcoo_params;
      for (const auto& params : variants) {
        const format_arguments args = build_arguments(sparse_op::spmv, a, program_of(f, params), 1);
        expect_close(emulate_spmv(f, args, s.rows, s.cols, x), want,
                     std::string(format_name(f)) + " " + std::to_string(s.rows) + "x" +
                         std::to_string(s.cols));
      }
    }
  }
}

TEST(abi, spmm_arguments_carry_the_same_layout_column_by_column) {
  const csr_matrix rectangular = random_matrix(40, 33, 7), square = random_matrix(40, 40, 7);
  const int32_t k = 3;
  for (format_kind f : all_formats) {
    const csr_matrix& a = f == format_kind::rcsr ? square : rectangular;  // RCSR: square only
    std::vector<float> b(static_cast<size_t>(a.cols) * k);
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 11) - 5.0f;
    std::vector<float> want(static_cast<size_t>(a.rows) * k);
    spmm_reference(a, b.data(), k, want.data());
    const format_arguments args = build_arguments(sparse_op::spmm, a, program_of(f), k);
    for (int32_t j = 0; j < k; ++j) {
      std::vector<float> column(static_cast<size_t>(a.cols)),
          want_column(static_cast<size_t>(a.rows));
      for (int32_t c = 0; c < a.cols; ++c) column[c] = b[size_t(c) * k + j];
      for (int32_t r = 0; r < a.rows; ++r) want_column[r] = want[size_t(r) * k + j];
      expect_close(emulate_spmv(f, args, a.rows, a.cols, column), want_column,
                   std::string(format_name(f)) + " column " + std::to_string(j));
    }
  }
}

TEST(abi, work_units_per_format) {
  const csr_matrix a = random_matrix(45, 45, 3);
  auto build = [&](format_kind f, std::map<std::string, int64_t> p = {}) {
    return build_arguments(sparse_op::spmv, a, program_of(f, std::move(p)), 1);
  };
  EXPECT_EQ(build(format_kind::csr).work_rows, 45);
  EXPECT_EQ(build(format_kind::csr).work_nnz, a.nnz());
  EXPECT_EQ(build(format_kind::coo).work_nnz, a.nnz());
  EXPECT_EQ(build(format_kind::coo).coo_nnz, a.nnz());
  EXPECT_EQ(build(format_kind::bsr, {{"r", 4}, {"c", 2}}).work_rows, (45 + 3) / 4);
  const format_arguments hyb = build(format_kind::hyb, {{"width", 2}});
  int64_t overflow = 0;
  for (int32_t r = 0; r < a.rows; ++r) overflow += std::max(0, a.row_length(r) - 2);
  EXPECT_EQ(hyb.coo_nnz, overflow);
  EXPECT_EQ(hyb.work_nnz, overflow);
  EXPECT_EQ(scalar(hyb, "coo_nnz"), overflow);
}

TEST(abi, automatic_hyb_width_is_the_length_a_third_of_the_rows_reach) {
  for (uint64_t seed : {1, 2, 3}) {
    const csr_matrix a = random_matrix(61, 40, seed);
    std::vector<int32_t> lengths;
    for (int32_t r = 0; r < a.rows; ++r) lengths.push_back(a.row_length(r));
    std::sort(lengths.rbegin(), lengths.rend());
    const int32_t expected = lengths[(61 + 2) / 3 - 1];
    const format_arguments args =
        build_arguments(sparse_op::spmv, a, program_of(format_kind::hyb), 1);
    EXPECT_EQ(scalar(args, "width"), expected);
    const auto reaching =
        std::count_if(lengths.begin(), lengths.end(), [&](int32_t l) { return l >= expected; });
    EXPECT_GE(reaching * 3, 61);
  }
}

TEST(abi, empty_matrix_builds_and_launches_nothing) {
  const csr_matrix empty;  // 0 x 0
  for (format_kind f : all_formats) {
    const format_arguments args = build_arguments(sparse_op::spmv, empty, program_of(f), 1);
    launch_spec l;
    l.block = 128;
    l.rows_per_block = 4;
    for (const entry_point& e : entry_points(sparse_op::spmv, f)) {
      const launch_geometry g = compute_geometry(l, e, args, 1);
      EXPECT_EQ(g.grid_x, 0u) << format_name(f);
    }
  }
}

TEST(abi, format_parameters_are_checked_and_canonicalised) {
  std::map<std::string, int64_t> p = {{"c", 16}};
  EXPECT_EQ(normalize_format_params(format_kind::sell, p), "");
  EXPECT_EQ(p, (std::map<std::string, int64_t>{{"C", 16}, {"sigma", 1}}));
  p = {{"R", 2}};
  EXPECT_EQ(normalize_format_params(format_kind::bsr, p), "");
  EXPECT_EQ(p, (std::map<std::string, int64_t>{{"c", 4}, {"r", 2}}));
  p = {};
  EXPECT_EQ(normalize_format_params(format_kind::hyb, p), "");
  EXPECT_EQ(p.at("width"), 0);

  auto reason = [](format_kind f, std::map<std::string, int64_t> q) {
    return normalize_format_params(f, q);
  };
  EXPECT_EQ(reason(format_kind::sell, {{"C", 33}}), "C=33 must be a power of two in 1..1024");
  EXPECT_EQ(reason(format_kind::sell, {{"C", 2048}}), "C=2048 must be a power of two in 1..1024");
  EXPECT_EQ(reason(format_kind::sell, {{"sigma", 0}}), "sigma=0 must be in 1..2147483647");
  EXPECT_EQ(reason(format_kind::bsr, {{"r", 65}}), "r=65 must be in 1..64");
  EXPECT_THAT(reason(format_kind::hyb, {{"width", -1}}), HasSubstr("0 = automatic"));
  EXPECT_EQ(reason(format_kind::sell, {{"foo", 1}}),
            "unknown parameter 'foo' for SELL (known: C, sigma)");
  EXPECT_EQ(reason(format_kind::csr, {{"C", 1}}),
            "unknown parameter 'C' for CSR (it takes no parameters)");
  EXPECT_THAT(reason(format_kind::sell, {{"C", 16}, {"c", 8}}), HasSubstr("given twice"));

  const csr_matrix a = random_matrix(10, 10, 1);
  try {
    build_arguments(sparse_op::spmv, a, program_of(format_kind::sell, {{"C", 3}}), 1);
    FAIL() << "C=3 accepted";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("C=3"));
  }
  EXPECT_THROW(build_arguments(sparse_op::spmm, a, program_of(format_kind::csr), 0), error);
}

TEST(abi, padded_formats_refuse_absurd_padding) {
  // One dense row of 20000 in 100000 otherwise single-entry rows: ELL would store 2e9 cells.
  std::vector<triplet> t;
  const int32_t n = 100000;
  for (int32_t r = 0; r < n; ++r) t.push_back({r, r, 1.0f});
  for (int32_t c = 0; c < 20000; ++c) t.push_back({5, c * 5, 1.0f});
  const csr_matrix a = csr_from_triplets(n, n, std::move(t));
  EXPECT_THROW(build_arguments(sparse_op::spmv, a, program_of(format_kind::ell), 1), error);
  // HYB handles exactly this matrix: its automatic width is 1.
  const format_arguments hyb = build_arguments(sparse_op::spmv, a, program_of(format_kind::hyb), 1);
  EXPECT_EQ(scalar(hyb, "width"), 1);
}

// ---- geometry -----------------------------------------------------------------------------------

format_arguments work(int64_t rows, int64_t nnz) {
  format_arguments a;
  a.work_rows = rows;
  a.work_nnz = nnz;
  return a;
}

std::string geometry_error(const launch_spec& s, const entry_point& e, const format_arguments& a,
                           int32_t k = 1, const launch_limits& limits = {}) {
  try {
    compute_geometry(s, e, a, k, limits);
  } catch (const error& ex) {
    return ex.what();
  }
  return "";
}

TEST(abi, geometry_from_each_work_key) {
  const entry_point rows_entry{"spmv_ell", false}, nnz_entry{"spmv_coo", true};
  launch_spec s;
  s.block = 256;
  s.rows_per_block = 8;
  launch_geometry g = compute_geometry(s, rows_entry, work(1001, 0), 1);
  EXPECT_EQ(g.grid_x, 126u);  // ceil(1001 / 8)
  EXPECT_EQ(g.grid_y, 1u);
  EXPECT_EQ(g.block_x, 256u);
  s.rows_per_block = 0;
  s.nnz_per_block = 1000;
  EXPECT_EQ(compute_geometry(s, nnz_entry, work(10, 5001), 1).grid_x, 6u);
  EXPECT_EQ(compute_geometry(s, nnz_entry, work(10, 0), 1).grid_x, 1u);  // rows, no nonzeros
  EXPECT_EQ(compute_geometry(s, nnz_entry, work(0, 0), 1).grid_x, 0u);
  s.nnz_per_block = 0;
  s.grid = 77;
  s.k_per_block = 8;
  s.shared_bytes = 1024;
  g = compute_geometry(s, rows_entry, work(10, 0), 20);
  EXPECT_EQ(g.grid_x, 77u);
  EXPECT_EQ(g.grid_y, 3u);  // ceil(20 / 8)
  EXPECT_EQ(g.shared_bytes, 1024u);
}

TEST(abi, geometry_refusals_say_why) {
  const entry_point rows_entry{"spmv_coo_init", false}, nnz_entry{"spmv_coo", true};
  launch_spec s;
  s.block = 256;
  EXPECT_THAT(geometry_error(s, rows_entry, work(10, 10)), HasSubstr("(got none)"));
  s.rows_per_block = 1;
  s.grid = 4;
  EXPECT_THAT(geometry_error(s, rows_entry, work(10, 10)),
              HasSubstr("(got rows_per_block and grid)"));
  s.grid = 0;
  s.rows_per_block = 0;
  s.nnz_per_block = 32;
  EXPECT_EQ(geometry_error(s, rows_entry, work(10, 10)),
            "nnz_per_block does not apply to spmv_coo_init (it is not split by nonzeros; use "
            "rows_per_block or grid)");
  EXPECT_EQ(geometry_error(s, nnz_entry, work(10, 10)), "");
  s.block = 2048;
  EXPECT_EQ(geometry_error(s, nnz_entry, work(10, 10)),
            "block=2048 is outside 1..1024 (threads per block)");
  s.block = 0;
  EXPECT_THAT(geometry_error(s, nnz_entry, work(10, 10)), HasSubstr("block=0"));
  s.block = 1024;
  s.nnz_per_block = 0;
  s.grid = 1000000000;
  EXPECT_EQ(geometry_error(s, nnz_entry, work(10, 10)),
            "launch of 1000000000 blocks x 1024 threads exceeds the 2^32-thread limit");
  s.grid = 3000000000;
  EXPECT_THAT(geometry_error(s, nnz_entry, work(10, 10)), HasSubstr("grid.x limit"));
  s.grid = 1;
  s.k_per_block = 1;
  EXPECT_THAT(geometry_error(s, nnz_entry, work(10, 10), 70000), HasSubstr("grid.y limit"));
  s.k_per_block = 0;
  s.shared_bytes = 300000;
  EXPECT_THAT(geometry_error(s, nnz_entry, work(10, 10)), HasSubstr("shared=300000"));
  s.shared_bytes = 0;
  launch_limits small;
  small.max_total_threads = 1000;
  s.grid = 2;
  s.block = 512;
  EXPECT_EQ(geometry_error(s, nnz_entry, work(10, 10), 1, small),
            "launch of 2 blocks x 512 threads exceeds the 1000-thread limit");
}

TEST(abi, defines_name_format_and_first_launch_parameters) {
  kernel_program p = program_of(format_kind::sell, {{"C", 16}, {"sigma", 64}});
  launch_spec l;
  l.entry = "spmm_sell";
  l.block = 128;
  l.rows_per_block = 16;
  l.k_per_block = 4;
  p.launches = {l};
  const std::string d = parameter_defines(p);
  for (const char* line :
       {"#define SPARSERL_C 16\n", "#define SPARSERL_SIGMA 64\n", "#define SPARSERL_BLOCK 128\n",
        "#define SPARSERL_ROWS_PER_BLOCK 16\n", "#define SPARSERL_K_PER_BLOCK 4\n",
        "#define SPARSERL_SPMM_SELL_BLOCK 128\n"})
    EXPECT_THAT(d, HasSubstr(line));
  EXPECT_THAT(d, ::testing::Not(HasSubstr("NNZ_PER_BLOCK")));

  const std::string bsr = parameter_defines(program_of(format_kind::bsr, {{"r", 2}, {"c", 8}}));
  EXPECT_THAT(bsr, HasSubstr("#define SPARSERL_BLOCK_R 2\n"));
  EXPECT_THAT(bsr, HasSubstr("#define SPARSERL_BLOCK_C 8\n"));
  EXPECT_THAT(bsr, ::testing::Not(HasSubstr("SPARSERL_C ")));
  EXPECT_THAT(parameter_defines(program_of(format_kind::hyb, {{"width", 0}})),
              ::testing::Not(HasSubstr("WIDTH")));
  EXPECT_THAT(parameter_defines(program_of(format_kind::hyb, {{"width", 6}})),
              HasSubstr("#define SPARSERL_WIDTH 6\n"));
}

}  // namespace
}  // namespace sparserl
