// The rollout log's lines: a program named by its expert line when it is that template's program
// (else its FORMAT and LAUNCH lines), each row's verdict, its advantage averaged over its response
// tokens only, and whether it entered the update.
#include <gtest/gtest.h>
#include <torch/types.h>

#include "kernel/expert_library.h"
#include "train/rollout_judge.h"
#include "train/rollout_log.h"

namespace sparserl::train {
namespace {

TEST(rollout_log, program_label_names_the_template_only_when_the_program_is_its) {
  expert_config bsr;
  bsr.name = "bsr";
  bsr.format = format_kind::bsr;
  bsr.format_params = {{"c", 3}, {"r", 3}};
  bsr.params = {{"block", 128}, {"group", 4}};
  const std::string expert = emit_program(bsr).to_text();
  EXPECT_EQ(program_label(expert, sparse_op::spmv), "bsr spmv BSR c=3 r=3 block=128 group=4");
  // Another comment or indent is the same program.
  std::string reworded = expert;
  reworded.insert(reworded.find("constexpr"), "// mine\n  ");
  EXPECT_EQ(program_label(reworded, sparse_op::spmv), "bsr spmv BSR c=3 r=3 block=128 group=4");
  // The expert line kept above another launch (what PPO wrote on the H100): the program's own
  // lines.
  std::string relaunched = expert;
  const size_t launch = relaunched.find("LAUNCH: block=128 rows_per_block=32");
  ASSERT_NE(launch, std::string::npos) << relaunched.substr(0, 200);
  relaunched.replace(launch, 35, "LAUNCH: block=256 rows_per_block=32");
  EXPECT_EQ(program_label(relaunched, sparse_op::spmv),
            "FORMAT: BSR r=3 c=3; LAUNCH: block=256 rows_per_block=32 (edited from bsr spmv BSR "
            "c=3 r=3 block=128 group=4)");
  // A line naming no template, or the right one above an unrelated body.
  EXPECT_EQ(program_label("FORMAT: RCSR\nLAUNCH spmv_rcsr_gather: block=256 rows_per_block=256\n"
                          "LAUNCH spmv_rcsr: block=128 rows_per_block=32\n// expert: rcsr_vector "
                          "spmv RCSR block=128 lanes=4\n__global__ ...",
                          sparse_op::spmv),
            "FORMAT: RCSR; LAUNCH spmv_rcsr_gather: block=256 rows_per_block=256; LAUNCH "
            "spmv_rcsr: block=128 rows_per_block=32 (edited from rcsr_vector spmv RCSR block=128 "
            "lanes=4)");
  EXPECT_EQ(program_label("FORMAT: CSR\nLAUNCH: block=64 rows_per_block=64\nextern \"C\" ...",
                          sparse_op::spmv),
            "FORMAT: CSR; LAUNCH: block=64 rows_per_block=64");
  EXPECT_EQ(program_label("LAUNCH: block=64\n", sparse_op::spmv), "LAUNCH: block=64");
  EXPECT_EQ(program_label("int main() {}", sparse_op::spmv), "(no program)");
  EXPECT_EQ(program_label("", sparse_op::spmv), "(no program)");
}

TEST(rollout_log, records_hold_each_rows_verdict_advantage_and_use) {
  ppo_task a, b;
  a.id = "mesh-a";
  b.id = "knn-b";
  const std::vector<ppo_task> tasks = {a, b};
  rollouts r;
  r.task_index = {0, 0, 1};
  r.group = {0, 0, 1};
  for (const char* text : {"FORMAT: CSR\nx", "FORMAT: CSR\nx", "junk"}) {
    generation g;
    g.text = text;
    r.generations.push_back(g);
  }
  std::vector<verdict> v(3);
  v[0].extracted = v[0].compiled = v[0].ran = v[0].correct = true;
  v[0].speedup = 1.25;
  v[0].reward = 1.32;
  v[1] = v[0];
  v[2].failure = "no program: " + std::string(300, 'x');  // cut to 120 characters
  v[2].reward = -1;
  // Row 0: advantage 0.5 on its two response tokens, padding after them holds 9 (not counted).
  const torch::Tensor adv =
      torch::tensor({0.5f, 0.5f, 9.0f, -0.25f, -0.25f, -0.25f, 0.f, 0.f, 0.f}).reshape({3, 3});
  const torch::Tensor mask =
      torch::tensor({1.f, 1.f, 0.f, 1.f, 1.f, 1.f, 0.f, 0.f, 0.f}).reshape({3, 3});
  const std::vector<nlohmann::json> lines =
      rollout_records(r, tasks, v, rollout_identities(r, tasks), adv, mask, {0, 1});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["task"], "mesh-a");
  EXPECT_EQ(lines[2]["task"], "knn-b");
  EXPECT_EQ(lines[2]["group"], 1);
  EXPECT_EQ(lines[0]["program"], "FORMAT: CSR");
  EXPECT_EQ(lines[0]["program_sha256"], lines[1]["program_sha256"]);
  EXPECT_NE(lines[0]["program_sha256"], lines[2]["program_sha256"]);
  EXPECT_EQ(lines[0]["correct"], true);
  EXPECT_DOUBLE_EQ(lines[0]["speedup"].get<double>(), 1.25);
  EXPECT_TRUE(lines[2]["speedup"].is_null());
  EXPECT_FLOAT_EQ(lines[0]["advantage"].get<float>(), 0.5f);
  EXPECT_FLOAT_EQ(lines[1]["advantage"].get<float>(), -0.25f);
  EXPECT_FLOAT_EQ(lines[2]["advantage"].get<float>(), 0.f);  // no response tokens
  EXPECT_EQ(lines[1]["used"], true);
  EXPECT_EQ(lines[2]["used"], false);
  EXPECT_EQ(lines[2]["reward"], -1);
  EXPECT_EQ(lines[2]["failure"].get<std::string>().size(), 120u);
  EXPECT_EQ(lines[0]["failure"], "");
}

}  // namespace
}  // namespace sparserl::train
