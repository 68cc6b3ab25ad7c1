#include <gtest/gtest.h>

#include "kernel/abi.h"
#include "kernel/completion.h"
#include "kernel/program.h"
#include "kernel/program_testing.h"

namespace sparserl {
namespace {

using testing::all_formats;
using testing::all_ops;

TEST(program, names_parse_back_in_any_case) {
  for (format_kind f : all_formats) {
    const std::string name = format_name(f);
    ASSERT_EQ(parse_format(name), f) << name;
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(parse_format(lower), f) << lower;
  }
  for (sparse_op op : all_ops) {
    EXPECT_EQ(parse_op(op_name(op)), op);
    EXPECT_EQ(parse_op(op == sparse_op::spmv ? "SpMV" : "SPMM"), op);
  }
  EXPECT_FALSE(parse_format("CSR5"));
  EXPECT_FALSE(parse_format(""));
  EXPECT_FALSE(parse_format("cs"));
  EXPECT_FALSE(parse_op("spmvx"));
}

TEST(program, to_text_writes_the_documented_lines) {
  kernel_program p;
  p.format = format_kind::bsr;
  p.format_params = {{"r", 2}, {"c", 8}};
  launch_spec l;
  l.block = 64;
  l.rows_per_block = 2;
  l.k_per_block = 16;
  l.shared_bytes = 4096;
  p.launches = {l};
  p.source = "extern \"C\" __global__ void spmm_bsr() {}\n";
  EXPECT_EQ(p.to_text(),
            "FORMAT: BSR r=2 c=8\n"
            "LAUNCH: block=64 rows_per_block=2 k_per_block=16 shared=4096\n"
            "extern \"C\" __global__ void spmm_bsr() {}\n");
  p.launches[0].entry = "spmm_bsr";
  p.launches[0].rows_per_block = 0;
  p.launches[0].grid = 100;
  EXPECT_NE(p.to_text().find("LAUNCH spmm_bsr: block=64 grid=100 k_per_block=16"),
            std::string::npos);
}

TEST(program, parsed_programs_survive_to_text_unchanged) {
  for (sparse_op op : all_ops)
    for (format_kind f : all_formats) {
      const parse_result first = parse_completion(testing::sample_completion(op, f), op);
      ASSERT_TRUE(first.program) << first.error;
      const std::string text = first.program->to_text();
      const parse_result again = parse_completion(text, op);
      ASSERT_TRUE(again.program) << again.error << "\n" << text;
      EXPECT_TRUE(testing::same_program(*first.program, *again.program)) << text;
      EXPECT_EQ(again.program->to_text(), text);
    }
}

TEST(program, hand_built_single_entry_program_parses_to_its_canonical_form) {
  // An unnamed launch (as the expert library writes it) comes back named after the entry.
  kernel_program p;
  p.format = format_kind::sell;
  p.format_params = {{"C", 8}, {"sigma", 64}};
  launch_spec l;
  l.block = 256;
  l.rows_per_block = 256;
  p.launches = {l};
  p.source = testing::sample_source(sparse_op::spmv, format_kind::sell);
  const parse_result r = parse_completion(p.to_text(), sparse_op::spmv);
  ASSERT_TRUE(r.program) << r.error;
  p.launches[0].entry = "spmv_sell";
  EXPECT_TRUE(testing::same_program(p, *r.program));
}

}  // namespace
}  // namespace sparserl
