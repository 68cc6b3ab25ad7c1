// Sampling programs with a header of their own (train/program_sampler.h): a tiny policy is taught
// two programs per matrix that differ in their header (the LAUNCH line) and in their source after
// it. Drawn greedily in two phases it must write what one greedy pass writes; with the header
// sampled and the source drawn greedily, every program must be one of the two taught ones (the
// source follows the header it was given), both headers must turn up, and the length budget must
// hold.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <memory>
#include <set>

#include "sparse/generators.h"
#include "train/lm_examples.h"
#include "train/program_sampler.h"
#include "train/prompt.h"
#include "train/trainer_lm.h"
#include "train_testing.h"

namespace sparserl::train {
namespace {

// Program `variant` (0 or 1): its header ends at the blank line; the sources differ too.
std::string taught_program(int variant) {
  const std::string block = variant == 0 ? "64" : "128";
  return "FORMAT: CSR\nLAUNCH: block=" + block + " rows_per_block=" + block +
         "\n// expert: csr_scalar spmv CSR block=" + block + "\n\n" +
         "extern \"C\" __global__ void spmv_csr(int rows) {\n  int row = blockIdx.x * " +
         (variant == 0 ? std::string("64") : std::string("blockDim.x")) +
         " + threadIdx.x;\n  if (row >= rows) return;\n}\n";
}

class program_sampler_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<testing::temp_dir>("program_sampler");
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      generator_spec s;
      s.family = "banded";
      s.rows = 48 + 16 * static_cast<int32_t>(seed);
      s.seed = seed;
      matrices_.push_back(generate_matrix(s));
    }
    std::vector<std::string> texts = {taught_program(0), taught_program(1)};
    for (const auto& m : matrices_) texts.push_back(task_prompt(sparse_op::spmv, 1, m));
    testing::train_test_tokenizer(texts, dir_->sub("tok"), 400);
    torch::manual_seed(1);
    policy_ = std::make_unique<policy>(testing::tiny_policy(dir_->sub("tok"), 5, false, 8));
    lm_dataset sft;
    for (size_t i = 0; i < matrices_.size(); ++i) {
      sft.prefixes.push_back(policy_->encode(matrices_[i]));
      for (int variant : {0, 1})
        sft.train.push_back(make_sft_example(*policy_,
                                             task_prompt(sparse_op::spmv, 1, matrices_[i]),
                                             taught_program(variant), static_cast<int64_t>(i)));
    }
    lm_train_options so;
    so.run.run_dir = dir_->sub("sft");
    so.run.steps = 120;
    so.run.progress = false;
    so.optim.lr = 3e-3;
    so.batch_size = 4;
    sft_loss_ = train_lm(*policy_, sft, so).last_train_loss;
    for (const csr_matrix& m : matrices_) inputs_.push_back(read_matrix(*policy_, m));
  }
  static void TearDownTestSuite() {
    inputs_.clear();
    policy_.reset();
    dir_.reset();
  }

  // `copies` requests for each toy matrix.
  static std::vector<program_request> requests(int copies) {
    std::vector<program_request> out;
    for (const matrix_input& in : inputs_)
      for (int c = 0; c < copies; ++c) out.push_back({sparse_op::spmv, 1, &in});
    return out;
  }

  static std::unique_ptr<testing::temp_dir> dir_;
  static std::vector<csr_matrix> matrices_;
  static std::unique_ptr<policy> policy_;
  static std::vector<matrix_input> inputs_;
  static double sft_loss_;
};
std::unique_ptr<testing::temp_dir> program_sampler_test::dir_;
std::vector<csr_matrix> program_sampler_test::matrices_;
std::unique_ptr<policy> program_sampler_test::policy_;
std::vector<matrix_input> program_sampler_test::inputs_;
double program_sampler_test::sft_loss_ = 0;

const sampling_options greedy{0.0, 0, 1.0, 0};

TEST_F(program_sampler_test, a_greedy_header_then_a_greedy_source_is_one_greedy_pass) {
  // Each program half the time: the loss cannot fall below ln 2 per program; near it, SFT learnt.
  ASSERT_LT(sft_loss_, 0.2);
  const sampled_programs one = sample_programs(*policy_, requests(1), 160, greedy);
  const sampled_programs two = sample_programs(*policy_, requests(1), 160, greedy, greedy);
  ASSERT_EQ(one.generations.size(), two.generations.size());
  for (size_t i = 0; i < one.generations.size(); ++i) {
    EXPECT_EQ(one.generations[i].ids, two.generations[i].ids) << "matrix " << i;
    EXPECT_EQ(one.generations[i].text, two.generations[i].text);
    EXPECT_EQ(one.generations[i].finish_reason, two.generations[i].finish_reason);
    // The second phase ran: the program went on past its header.
    EXPECT_NE(two.generations[i].text.find("__global__"), std::string::npos)
        << two.generations[i].text;
  }
  EXPECT_TRUE(torch::equal(one.prefix, two.prefix));
}

TEST_F(program_sampler_test, a_sampled_header_is_followed_by_its_own_source) {
  const int copies = 12;
  const sampling_options sampled{1.0, 0, 0.9, 11};
  const sampled_programs s = sample_programs(*policy_, requests(copies), 160, greedy, sampled);
  std::set<std::string> seen;
  for (const generation& g : s.generations) {
    EXPECT_TRUE(g.text == taught_program(0) || g.text == taught_program(1)) << g.text;
    seen.insert(g.text);
    EXPECT_EQ(g.finish_reason, "eos");
  }
  EXPECT_EQ(seen.size(), 2u) << "the sampled header drew one program for all " << 2 * copies;
}

TEST_F(program_sampler_test, the_length_budget_covers_header_and_source) {
  // Longer than any header, shorter than any program: every sequence is cut at the budget.
  const std::string program = taught_program(1);
  const auto header_tokens = static_cast<int64_t>(
      policy_->encode_text(program.substr(0, program.find("\n\n") + 2)).size());
  const auto program_tokens = static_cast<int64_t>(policy_->encode_text(taught_program(0)).size());
  ASSERT_GT(program_tokens, header_tokens + 8);
  const int64_t budget = header_tokens + 4;
  const sampled_programs s =
      sample_programs(*policy_, requests(4), budget, greedy, sampling_options{1.0, 0, 0.9, 3});
  for (const generation& g : s.generations) {
    EXPECT_LE(static_cast<int64_t>(g.ids.size()), budget);
    EXPECT_EQ(g.finish_reason, "length") << g.text;
    EXPECT_EQ(g.text, strip_program_end(policy_->tokenizer().decode(g.ids)));
  }
  // A budget that the header alone fills leaves no source at all.
  const sampled_programs header_only =
      sample_programs(*policy_, requests(1), 3, greedy, sampling_options{1.0, 0, 0.9, 3});
  for (const generation& g : header_only.generations) {
    EXPECT_EQ(g.ids.size(), 3u);
    EXPECT_EQ(g.finish_reason, "length");
  }
}

}  // namespace
}  // namespace sparserl::train
