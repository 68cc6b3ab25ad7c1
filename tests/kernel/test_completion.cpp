#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "kernel/abi.h"
#include "kernel/completion.h"
#include "kernel/program_testing.h"

namespace sparserl {
namespace {

using testing::all_formats;
using testing::all_ops;
using ::testing::HasSubstr;

const std::string csr_code = testing::sample_source(sparse_op::spmv, format_kind::csr);

parse_result spmv(const std::string& text) { return parse_completion(text, sparse_op::spmv); }

std::string error_of(const std::string& text, sparse_op op = sparse_op::spmv) {
  const parse_result r = parse_completion(text, op);
  EXPECT_FALSE(r.program) << text;
  return r.error;
}

TEST(completion, canonical_text) {
  const parse_result r = spmv("FORMAT: SELL C=8 sigma=256\nLAUNCH: block=256 rows_per_block=8\n" +
                              testing::sample_source(sparse_op::spmv, format_kind::sell));
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->format, format_kind::sell);
  EXPECT_EQ(r.program->format_params, (std::map<std::string, int64_t>{{"C", 8}, {"sigma", 256}}));
  ASSERT_EQ(r.program->launches.size(), 1u);
  EXPECT_EQ(r.program->launches[0].entry, "spmv_sell");
  EXPECT_EQ(r.program->launches[0].block, 256);
  EXPECT_EQ(r.program->launches[0].rows_per_block, 8);
  EXPECT_EQ(r.program->source, testing::sample_source(sparse_op::spmv, format_kind::sell));
  EXPECT_TRUE(r.error.empty());
}

TEST(completion, defaults_are_filled_in) {
  const parse_result r = spmv("FORMAT: bsr\nLAUNCH: block=32 rows_per_block=1\n" +
                              testing::sample_source(sparse_op::spmv, format_kind::bsr));
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->format_params, default_format_params(format_kind::bsr));
}

TEST(completion, fenced_after_prose) {
  const std::string text =
      "Rows are short, so one thread per row.\n\n```cuda\nFORMAT: CSR\n"
      "LAUNCH: block=128 rows_per_block=128\n" +
      csr_code + "```\nThis kernel is fast because...\n";
  const parse_result r = spmv(text);
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->source, csr_code);
}

TEST(completion, header_lines_then_a_fenced_block) {
  const std::string text =
      "FORMAT: CSR\nLAUNCH: block=64 nnz_per_block=256\n\nHere it is:\n"
      "```cpp\n" +
      csr_code + "```\n";
  const parse_result r = spmv(text);
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->source, csr_code);
  EXPECT_EQ(r.program->launches[0].nnz_per_block, 256);
}

TEST(completion, first_fenced_block_with_the_entry_point_wins) {
  const std::string text =
      "FORMAT: CSR\nLAUNCH: block=64 rows_per_block=64\n```\nhelper notes\n```\n"
      "```cuda\n" +
      csr_code + "```\n```cuda\n// another version\n" + csr_code + "```\n";
  const parse_result r = spmv(text);
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->source, csr_code);
}

TEST(completion, unterminated_fence_at_the_end_is_stripped) {
  const std::string bare = "FORMAT: CSR\nLAUNCH: block=64 rows_per_block=64\n" + csr_code;
  const parse_result r = spmv(bare + "```\n");
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->source, csr_code);
  const parse_result open = spmv("```cuda\n" + bare);  // the fence never closes
  ASSERT_TRUE(open.program) << open.error;
  EXPECT_EQ(open.program->source, csr_code);
}

TEST(completion, crlf_and_commas_and_indentation) {
  const std::string text = "  FORMAT: csr\r\n  LAUNCH: block=64, rows_per_block=2\r\n" + csr_code;
  const parse_result r = spmv(text);
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->launches[0].rows_per_block, 2);
}

TEST(completion, named_and_default_launch_lines) {
  const std::string coo = testing::sample_source(sparse_op::spmv, format_kind::coo);
  const parse_result r = spmv(
      "FORMAT: COO\nLAUNCH spmv_coo: block=256 nnz_per_block=1024\n"
      "LAUNCH: block=128 rows_per_block=128\n" +
      coo);
  ASSERT_TRUE(r.program) << r.error;
  ASSERT_EQ(r.program->launches.size(), 2u);
  EXPECT_EQ(r.program->launches[0].entry, "spmv_coo_init");
  EXPECT_EQ(r.program->launches[0].rows_per_block, 128);
  EXPECT_EQ(r.program->launches[1].entry, "spmv_coo");
  EXPECT_EQ(r.program->launches[1].nnz_per_block, 1024);
  // One unnamed line applies to every entry point.
  const parse_result all = spmv("FORMAT: COO\nLAUNCH: block=64 grid=100\n" + coo);
  ASSERT_TRUE(all.program) << all.error;
  EXPECT_EQ(all.program->launches[0].grid, 100);
  EXPECT_EQ(all.program->launches[1].grid, 100);
}

// RCSR has two entry points (the gather, then the product): named LAUNCH lines, or one unnamed
// line for both; the source must define both.
TEST(completion, rcsr_takes_two_launch_lines_or_one_unnamed) {
  for (sparse_op op : all_ops) {
    const std::string o = op_name(op);
    const std::string source = testing::sample_source(op, format_kind::rcsr);
    const parse_result r =
        parse_completion("FORMAT: RCSR\nLAUNCH " + o +
                             "_rcsr: block=128 nnz_per_block=512\n"
                             "LAUNCH " +
                             o + "_rcsr_gather: block=256 rows_per_block=256\n" + source,
                         op);
    ASSERT_TRUE(r.program) << r.error;
    EXPECT_EQ(r.program->format, format_kind::rcsr);
    // The numbering defaults to reverse Cuthill-McKee; hubs_first=1 asks for hubs first.
    EXPECT_EQ(r.program->format_params, (std::map<std::string, int64_t>{{"hubs_first", 0}}));
    ASSERT_EQ(r.program->launches.size(), 2u);
    EXPECT_EQ(r.program->launches[0].entry, o + "_rcsr_gather");
    EXPECT_EQ(r.program->launches[0].rows_per_block, 256);
    EXPECT_EQ(r.program->launches[1].entry, o + "_rcsr");
    EXPECT_EQ(r.program->launches[1].nnz_per_block, 512);
    const parse_result one =
        parse_completion("FORMAT: rcsr\nLAUNCH: block=64 rows_per_block=64\n" + source, op);
    ASSERT_TRUE(one.program) << one.error;
    ASSERT_EQ(one.program->launches.size(), 2u);
    EXPECT_EQ(one.program->launches[0].rows_per_block, 64);
    EXPECT_EQ(one.program->launches[1].rows_per_block, 64);
    const parse_result hubs = parse_completion(
        "FORMAT: RCSR hubs_first=1\nLAUNCH: block=64 rows_per_block=64\n" + source, op);
    ASSERT_TRUE(hubs.program) << hubs.error;
    EXPECT_EQ(hubs.program->format_params.at("hubs_first"), 1);
    EXPECT_THAT(
        error_of("FORMAT: RCSR hubs_first=2\nLAUNCH: block=64 rows_per_block=64\n" + source, op),
        HasSubstr("hubs_first"));
    // Only the product is split by nonzeros.
    EXPECT_THAT(error_of("FORMAT: RCSR\nLAUNCH: block=64 nnz_per_block=64\n" + source, op),
                HasSubstr(o + "_rcsr_gather"));
    // The gather is an entry point like any other: a source without it is refused.
    const std::string product_only = entry_signature(op, format_kind::rcsr, o + "_rcsr") + " {}\n";
    EXPECT_THAT(error_of("FORMAT: RCSR\nLAUNCH: block=64 rows_per_block=64\n" + product_only, op),
                HasSubstr(o + "_rcsr_gather"));
  }
}

TEST(completion, entry_point_with_launch_bounds_and_odd_spacing) {
  const std::string code =
      "extern  \"C\"\n__global__ void __launch_bounds__(SPARSERL_BLOCK, 2)\n  spmv_csr (int rows) "
      "{}\n";
  EXPECT_TRUE(spmv("FORMAT: CSR\nLAUNCH: block=64 rows_per_block=64\n" + code).program);
}

TEST(completion, format_errors) {
  EXPECT_EQ(error_of(""), "no FORMAT line");
  EXPECT_EQ(error_of("Here is a kernel:\n" + csr_code), "no FORMAT line");
  EXPECT_EQ(error_of("FORMAT:\n" + csr_code), "FORMAT line 1: no format name");
  EXPECT_EQ(
      error_of("text\nFORMAT: FOO\n"),
      "FORMAT line 2: unknown format 'FOO' (known: CSR, COO, ELL, SELL, BSR, DIA, HYB, CSR16, "
      "RCSR, HCOO)");
  EXPECT_EQ(error_of("FORMAT: SELL C=abc\n"), "FORMAT line 1: C=abc is not an integer");
  EXPECT_EQ(error_of("FORMAT: SELL C=99999999999999999999\n"),
            "FORMAT line 1: C=99999999999999999999 is out of range");
  EXPECT_EQ(error_of("FORMAT: SELL C=48\n"),
            "FORMAT line 1: C=48 must be a power of two in 1..1024");
  EXPECT_EQ(error_of("FORMAT: SELL slices=4\n"),
            "FORMAT line 1: unknown parameter 'slices' for SELL (known: C, sigma)");
  EXPECT_EQ(error_of("FORMAT: BSR r=4 because\n"), "FORMAT line 1: 'because' is not key=value");
  EXPECT_EQ(error_of("FORMAT: BSR r=4 r=2\n"), "FORMAT line 1: parameter 'r' given twice");
}

TEST(completion, launch_errors) {
  const std::string head = "FORMAT: CSR\n";
  EXPECT_EQ(error_of(head + "\nLAUNCH: block=abc rows_per_block=1\n" + csr_code),
            "LAUNCH line 3: block=abc is not an integer");
  EXPECT_EQ(error_of(head + "LAUNCH: block=2048 rows_per_block=1\n" + csr_code),
            "LAUNCH line 2: block=2048 must be in 1..1024");
  EXPECT_EQ(error_of(head + "LAUNCH: rows_per_block=1\n" + csr_code),
            "LAUNCH line 2: no block=<threads per block>");
  EXPECT_EQ(error_of(head + "LAUNCH: block=32\n" + csr_code),
            "LAUNCH line 2: give exactly one of rows_per_block, nnz_per_block, grid (got none)");
  EXPECT_EQ(error_of(head + "LAUNCH: block=32 grid=2 rows_per_block=1\n" + csr_code),
            "LAUNCH line 2: give exactly one of rows_per_block, nnz_per_block, grid (got "
            "rows_per_block and grid)");
  EXPECT_EQ(error_of(head + "LAUNCH: block=32 grid=0\n" + csr_code),
            "LAUNCH line 2: grid=0 must be positive");
  EXPECT_EQ(error_of(head + "LAUNCH: block=32 threads=4 grid=1\n" + csr_code),
            "LAUNCH line 2: unknown key 'threads' (known: block, rows_per_block, nnz_per_block, "
            "grid, k_per_block, shared)");
  EXPECT_EQ(error_of(head + "LAUNCH: block=32 block=64 grid=1\n" + csr_code),
            "LAUNCH line 2: block given twice");
  EXPECT_EQ(error_of(head + "LAUNCH spmv csr: block=32 grid=1\n" + csr_code),
            "LAUNCH line 2: expected 'LAUNCH: ...' or 'LAUNCH <entry>: ...'");
  EXPECT_EQ(error_of(head + "LAUNCH: block=32 grid=1 k_per_block=4\n" + csr_code),
            "LAUNCH line 2: k_per_block applies to SpMM only");
  EXPECT_EQ(error_of(head + csr_code),
            "no LAUNCH line (expected e.g. 'LAUNCH: block=256 "
            "rows_per_block=1')");
  EXPECT_EQ(error_of(head + "LAUNCH spmv_ell: block=32 grid=1\n" + csr_code),
            "LAUNCH line 2: 'spmv_ell' is not an entry point of CSR spmv (entry points: "
            "spmv_csr)");
  EXPECT_EQ(error_of(head + "LAUNCH: block=32 grid=1\nLAUNCH: block=32 grid=2\n" + csr_code),
            "LAUNCH line 3: second unnamed LAUNCH line (the first is line 2); name the entries: "
            "'LAUNCH <entry>: ...'");
  const std::string coo = testing::sample_source(sparse_op::spmv, format_kind::coo);
  EXPECT_EQ(error_of("FORMAT: COO\nLAUNCH spmv_coo: block=32 nnz_per_block=64\n" + coo),
            "no LAUNCH line for spmv_coo_init (write 'LAUNCH spmv_coo_init: ...' or one unnamed "
            "'LAUNCH: ...' for all entry points)");
  EXPECT_EQ(error_of("FORMAT: COO\nLAUNCH: block=32 nnz_per_block=64\n" + coo),
            "LAUNCH line 2: nnz_per_block does not apply to spmv_coo_init (it is not split by "
            "nonzeros; use rows_per_block or grid)");
}

TEST(completion, source_errors) {
  const std::string head = "FORMAT: COO\nLAUNCH: block=32 grid=1\n";
  EXPECT_EQ(error_of(head), "no device source after the FORMAT line");
  EXPECT_EQ(error_of(head + "```cuda\n\n```\n"), "no device source after the FORMAT line");
  const std::string coo = testing::sample_source(sparse_op::spmv, format_kind::coo);
  const std::string init_only = coo.substr(0, coo.find("extern", coo.find("spmv_coo_init")));
  EXPECT_THAT(error_of(head + init_only), HasSubstr("missing entry point spmv_coo"));
  const std::string no_init = "extern \"C\" __global__ void spmv_coo(int rows) {}\n";
  EXPECT_THAT(error_of(head + no_init), HasSubstr("missing entry point spmv_coo_init"));
  // Mentions in comments and strings do not count.
  EXPECT_THAT(error_of("FORMAT: CSR\nLAUNCH: block=1 grid=1\n"
                       "// extern \"C\" __global__ void spmv_csr(\n"
                       "const char* s = \"extern \\\"C\\\" __global__ void spmv_csr(\";\n"),
              HasSubstr("missing entry point spmv_csr"));
  const std::string cut = head + coo.substr(0, coo.rfind("if (i >= rows)"));
  EXPECT_EQ(error_of(cut), "completion truncated inside the source (unbalanced braces)");
  EXPECT_EQ(error_of(head + coo + "/* never closed"),
            "completion truncated inside the source (unterminated comment)");
  EXPECT_EQ(error_of("FORMAT: CSR\nLAUNCH: block=1 grid=1\n" +
                     std::string("extern \"C\" __global__ void spmv_csr(int rows,")),
            "completion truncated inside the source (unbalanced parentheses)");
  EXPECT_EQ(
      error_of("FORMAT: CSR\nLAUNCH: block=1 grid=1\nint a;\n" + std::string(1, '\0') + csr_code),
      "NUL byte in the source at line 4");
}

TEST(completion, spmm_entry_points_are_required_for_spmm) {
  const std::string text = testing::sample_completion(sparse_op::spmv, format_kind::csr);
  EXPECT_THAT(error_of(text, sparse_op::spmm), HasSubstr("missing entry point spmm_csr"));
  EXPECT_TRUE(parse_completion(testing::sample_completion(sparse_op::spmm, format_kind::csr),
                               sparse_op::spmm)
                  .program);
}

TEST(completion, parse_launch_line_alone) {
  launch_spec s;
  s.entry = "spmm_ell";
  EXPECT_EQ(parse_launch_line(" block=96 rows_per_block=3 k_per_block=32 shared=512 ", s), "");
  EXPECT_EQ(s.entry, "spmm_ell");
  EXPECT_EQ(s.block, 96);
  EXPECT_EQ(s.rows_per_block, 3);
  EXPECT_EQ(s.k_per_block, 32);
  EXPECT_EQ(s.shared_bytes, 512);
  const launch_spec before = s;
  EXPECT_EQ(parse_launch_line("block=-1 grid=1", s), "block=-1 must be in 1..1024");
  EXPECT_TRUE(testing::same_launch(s, before));  // untouched on failure
  EXPECT_EQ(parse_launch_line("block=1 grid=1 shared=-4", s),
            "shared=-4 must be in 0..2147483647 (bytes)");
  EXPECT_EQ(parse_launch_line("block=1 grid=", s), "grid= is not an integer");
  EXPECT_EQ(parse_launch_line("block=1 =4", s), "'=4' is not key=value");
}

// ---- fuzzing ------------------------------------------------------------------------------------

std::string mutate(std::string s, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  static const std::vector<std::string> inserts = {
      "```",      "```cuda\n",
      "\n```\n",  std::string(1, '\0'),
      "{",        "}",
      "/*",       "*/",
      "\"",       "'",
      "\\\n",     "\r",
      "FORMAT: ", "FORMAT: HYB width=999999999999999999999\n",
      "LAUNCH: ", "LAUNCH spmv_coo: block=4 nnz_per_block=18446744073709551616\n",
      "=",        "99999999999999999999999",
      "-0",       "\xff\xfe",
      "R\"x(",    "extern \"C\" __global__ void ",
      "%:",       "<%",
      "\n\n\n",   "~~~\n"};
  const int steps = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < steps; ++i) {
    switch (rng() % 8) {
      case 0:
        s.resize(pick(s.size() + 1));  // truncation
        break;
      case 1:
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng() & 0xff);
        break;
      case 2:
        s.insert(pick(s.size() + 1), inserts[pick(inserts.size())]);
        break;
      case 3: {  // delete a span
        const size_t at = pick(s.size() + 1);
        s.erase(at, pick(40));
        break;
      }
      case 4: {  // duplicate a line
        const size_t at = pick(s.size() + 1);
        const size_t begin = s.rfind('\n', at == 0 ? 0 : at - 1);
        const size_t b = begin == std::string::npos ? 0 : begin + 1;
        const size_t e = s.find('\n', b);
        const std::string line =
            s.substr(b, e == std::string::npos ? std::string::npos : e - b + 1);
        s.insert(b, line);
        break;
      }
      case 5: {  // replace a number with a huge or negative one
        const size_t at = s.find_first_of("0123456789", pick(s.size() + 1));
        if (at != std::string::npos)
          s.replace(at, 1, (rng() & 1) ? "18446744073709551615999" : "-7");
        break;
      }
      case 6:  // prose around
        s = (rng() & 1) ? "Sure! Here is the program:\n```cuda\n" + s + "\n```\nDone." : s + "\n";
        break;
      default: {  // random bytes
        std::string junk(pick(16), '\0');
        for (char& c : junk) c = static_cast<char>(rng() & 0xff);
        s.insert(pick(s.size() + 1), junk);
        break;
      }
    }
  }
  return s;
}

void check_one(const std::string& text, sparse_op op, int& parsed) {
  parse_result r;
  ASSERT_NO_THROW(r = parse_completion(text, op));
  if (!r.program) {
    ASSERT_FALSE(r.error.empty());
    return;
  }
  ++parsed;
  const kernel_program& p = *r.program;
  ASSERT_EQ(p.launches.size(), entry_points(op, p.format).size());
  ASSERT_FALSE(p.source.empty());
  const parse_result again = parse_completion(p.to_text(), op);
  ASSERT_TRUE(again.program) << again.error;
  ASSERT_TRUE(testing::same_program(p, *again.program));
}

TEST(completion, fuzz_never_throws_and_round_trips) {
  std::mt19937_64 rng(20240611);
  std::vector<std::pair<std::string, sparse_op>> seeds;
  for (sparse_op op : all_ops)
    for (format_kind f : all_formats) seeds.emplace_back(testing::sample_completion(op, f), op);
  int parsed = 0, total = 0;
  for (int i = 0; i < 100000; ++i) {
    const auto& [seed, op] = seeds[rng() % seeds.size()];
    check_one(mutate(seed, rng), op, parsed);
    ++total;
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (int i = 0; i < 5000; ++i) {  // pure noise
    std::string junk(rng() % 300, '\0');
    for (char& c : junk) c = static_cast<char>(rng() & 0xff);
    if (rng() % 4 == 0) junk = "FORMAT: CSR\n" + junk;
    check_one(junk, sparse_op::spmv, parsed);
    ++total;
    if (::testing::Test::HasFatalFailure()) return;
  }
  ::testing::Test::RecordProperty("parsed", parsed);
  // The mutations must leave a real share parsable, or the round-trip checks check nothing.
  EXPECT_GT(parsed, total / 20);
  EXPECT_LT(parsed, total);
}

}  // namespace
}  // namespace sparserl
