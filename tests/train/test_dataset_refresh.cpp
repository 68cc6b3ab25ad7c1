// dataset refresh: a label whose stored text is an older text of its program gets today's; one
// already in today's text is unchanged; an expert line today's space does not offer for the
// matrix, and a program without one, are left as they are.
#include <gtest/gtest.h>

#include <optional>

#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/features.h"
#include "sparse/generators.h"
#include "train/dataset_refresh.h"

namespace sparserl::train {
namespace {

sft_sample sample_of(const csr_matrix& m, const std::string& code) {
  sft_sample s = sft_pattern_of(m);
  s.code = code;
  s.format = "stale";
  return s;
}

TEST(dataset_refresh, older_texts_of_a_program_become_todays) {
  generator_spec spec = default_spec("fem");
  spec.rows = 3000;
  spec.block = 3;
  const csr_matrix m = generate_matrix(spec);
  // The BSR 3x3 configuration the library offers for this matrix, in today's text.
  std::optional<expert_config> bsr;
  for (const expert_config& c : expert_space(sparse_op::spmv, compute_features(m), 1))
    if (c.name == "bsr" && c.format_param("r") == 3) bsr = c;
  ASSERT_TRUE(bsr) << "no BSR 3x3 offered for a 3-dof FEM matrix";
  const std::string today = emit_program(*bsr).to_text();
  std::string older = today;  // an older template text: another loop
  older.replace(older.find("jj + 3 < kC"), 11, "jj < kC");
  ASSERT_NE(older, today);

  std::vector<sft_sample> samples = {
      sample_of(m, older), sample_of(m, today),
      sample_of(m, "FORMAT: BSR r=5 c=5\n// expert: bsr spmv BSR c=5 r=5 block=128 group=8\nx"),
      sample_of(m, "FORMAT: CSR\nLAUNCH: block=64 rows_per_block=64\nhand written")};
  const refresh_result r = refresh_label_code(samples, 2);
  EXPECT_EQ(r.refreshed, 1);
  EXPECT_EQ(r.unchanged, 1);
  EXPECT_EQ(r.not_found, 1);
  EXPECT_EQ(r.no_expert, 1);
  EXPECT_EQ(samples[0].code, today);
  EXPECT_EQ(samples[0].format, "BSR");
  EXPECT_EQ(samples[1].format, "stale");  // untouched
  EXPECT_EQ(samples[2].code.substr(0, 19), "FORMAT: BSR r=5 c=5");
  EXPECT_EQ(samples[3].code.substr(samples[3].code.size() - 12), "hand written");
  EXPECT_EQ(expert_description(today), bsr->describe());
  EXPECT_EQ(expert_description("no line"), "");
}

}  // namespace
}  // namespace sparserl::train
