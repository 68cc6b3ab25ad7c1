// judge_rollouts: a program sampled more than once for one task (or a variant of it with other
// comments or spacing) is run once and its verdict shared, so identical programs in a group get
// identical rewards (timing noise cannot make a group of one repeated program look like it has
// signal).
#include <gtest/gtest.h>

#include <atomic>

#include "eval/cpu_runner.h"
#include "kernel/abi.h"
#include "kernel/expert_library.h"
#include "kernel/heuristic.h"
#include "sparse/features.h"
#include "sparse/generators.h"
#include "train/program_verdicts.h"
#include "train/rollout_judge.h"

namespace sparserl::train {
namespace {

// Counts the programs the harness runs, then runs them on the CPU emulator.
class counting_runner : public program_runner {
 public:
  const char* name() const override { return inner_.name(); }
  run_result run(const run_request& request, const run_limits& limits) override {
    ++runs;
    return inner_.run(request, limits);
  }
  std::atomic<int> runs{0};

 private:
  cpu_runner inner_;
};

ppo_task task_for(const std::string& id, csr_matrix m) {
  ppo_task t;
  t.id = id;
  t.matrix = std::move(m);
  return t;
}

rollouts rows_of(const std::vector<std::pair<int64_t, std::string>>& rows) {
  rollouts r;
  for (const auto& [task, text] : rows) {
    r.task_index.push_back(task);
    r.group.push_back(task);
    generation g;
    g.text = text;
    r.generations.push_back(g);
  }
  return r;
}

TEST(rollout_judge, distinct_rollouts_maps_each_row_to_the_first_same_program_of_its_task) {
  const std::vector<ppo_task> tasks(2);
  const rollouts r = rows_of({{0, "a"}, {0, "b"}, {0, "a"}, {1, "a"}, {1, "a"}, {0, "b"}});
  EXPECT_EQ(distinct_rollouts(r, rollout_identities(r, tasks)),
            (std::vector<size_t>{0, 1, 0, 3, 3, 1}));
  // A program and its variant with another comment and indent are one program.
  const std::string head = "FORMAT: CSR\nLAUNCH: block=64 rows_per_block=64\n" +
                           entry_signature(sparse_op::spmv, format_kind::csr, "spmv_csr");
  const std::string p = head + " {\n  y[0] = x[0];\n}\n";
  const std::string variant = head + "\n{\n    y[0] = x[0]; // one row\n}\n";
  const std::string other = head + " {\n  y[0] = 2 * x[0];\n}\n";
  const rollouts variants = rows_of({{0, p}, {0, variant}, {0, other}, {1, variant}});
  EXPECT_EQ(distinct_rollouts(variants, rollout_identities(variants, tasks)),
            (std::vector<size_t>{0, 0, 2, 3}));
}

TEST(rollout_judge, identical_programs_are_run_once_and_share_the_verdict) {
  generator_spec spec;
  spec.family = "stencil2d";
  spec.rows = 400;
  std::vector<ppo_task> tasks{task_for("a", generate_matrix(spec))};
  spec.family = "banded";
  tasks.push_back(task_for("b", generate_matrix(spec)));
  const matrix_features f = compute_features(tasks[0].matrix);
  const std::string good = emit_program(pick_heuristic(sparse_op::spmv, f, 1)).to_text();
  const std::string bad = "FORMAT: CSR\nLAUNCH: block=128\nnot a kernel";
  const std::string good_variant = "// the same program\n" + good;  // prose before FORMAT
  const rollouts r =
      rows_of({{0, good}, {0, bad}, {0, good}, {1, good}, {0, good_variant}, {1, good}, {1, bad}});

  counting_runner runner;
  evaluator judge(runner);
  const std::vector<verdict> v = judge_rollouts(judge, tasks, r, rollout_identities(r, tasks), 3);
  ASSERT_EQ(v.size(), r.generations.size());
  // Three distinct (task, program) pairs run; the bad program never reaches the runner.
  EXPECT_EQ(runner.runs.load(), 2);
  EXPECT_TRUE(v[0].correct);
  EXPECT_FALSE(v[1].compiled);
  EXPECT_TRUE(v[3].correct);
  for (size_t i : {2u, 4u}) EXPECT_EQ(verdict_to_json(v[i]), verdict_to_json(v[0])) << i;
  EXPECT_EQ(verdict_to_json(v[5]), verdict_to_json(v[3]));
  EXPECT_EQ(verdict_to_json(v[6]).dump(), verdict_to_json(v[1]).dump());
}

// An evaluation's verdicts: the heuristic's pick as a kernel_program and the same program as a
// policy wrote it (other comments) are one program for one matrix, judged once; another matrix
// judges it again.
TEST(program_verdicts, one_program_is_judged_once_per_matrix_whoever_wrote_it) {
  generator_spec spec;
  spec.family = "stencil2d";
  spec.rows = 400;
  const csr_matrix a = generate_matrix(spec);
  spec.family = "random";
  const csr_matrix b = generate_matrix(spec);
  const kernel_program pick = emit_program(pick_heuristic(sparse_op::spmv, compute_features(a), 1));
  const std::string written = "// my kernel\n" + pick.to_text() + "// done\n";
  const eval_task on_a{sparse_op::spmv, &a, 1, "a"}, on_b{sparse_op::spmv, &b, 1, "b"};

  counting_runner runner;
  evaluator judge(runner);
  program_verdicts verdicts;
  const verdict policy_a = verdicts.judge(judge, on_a, written);
  const verdict heuristic_a = verdicts.judge(judge, on_a, pick);
  EXPECT_TRUE(policy_a.correct);
  EXPECT_EQ(runner.runs.load(), 1);
  EXPECT_EQ(verdicts.shared(), 1);
  EXPECT_EQ(verdict_to_json(heuristic_a), verdict_to_json(policy_a));
  const verdict heuristic_b = verdicts.judge(judge, on_b, pick);
  EXPECT_EQ(runner.runs.load(), 2);
  EXPECT_EQ(verdicts.shared(), 1);
  EXPECT_TRUE(heuristic_b.correct);
  // A different program for matrix a is judged.
  const kernel_program other =
      emit_program(pick_heuristic(sparse_op::spmv, compute_features(b), 1));
  ASSERT_NE(other.to_text(), pick.to_text());
  verdicts.judge(judge, on_a, other);
  EXPECT_EQ(runner.runs.load(), 3);
}

}  // namespace
}  // namespace sparserl::train
