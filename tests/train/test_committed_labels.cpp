// The committed GPU labels (data/labels/, made by scripts/gpu-learn.sh) stay usable: every line
// parses, and the matrices stored by their generator's recipe are remade exactly (the digest
// check in to_matrix fails the day a generator changes what it makes).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "train/sft_data.h"

namespace sparserl::train {
namespace {

TEST(committed_labels, every_label_parses_and_its_generator_remakes_the_matrix) {
  const std::string path = std::string(SPARSERL_SOURCE_DIR) + "/data/labels/spmv-h200.jsonl.gz";
  const std::vector<sft_sample> labels = read_sft_jsonl(path);
  ASSERT_GE(labels.size(), 40u);
  std::set<std::string> families;
  int remade = 0;
  for (const sft_sample& s : labels) {
    ASSERT_TRUE(s.generator) << s.name;
    families.insert(s.generator->family);
    EXPECT_EQ(s.label, "autotune") << s.name;
    EXPECT_FALSE(s.candidates.empty()) << s.name;
    // The smaller ones only, to keep the test to seconds on two cores.
    if (!s.by_generator() || s.nnz() > 1500000) continue;
    const csr_matrix m = to_matrix(s);  // throws when the pattern differs from the digest
    EXPECT_EQ(m.nnz(), s.nnz()) << s.name;
    ++remade;
  }
  EXPECT_GE(remade, 5);
  EXPECT_GE(families.size(), 10u);
}

}  // namespace
}  // namespace sparserl::train
