// Every expert template compiles with NVRTC for sm_90 (no GPU needed) after the harness's
// parameter defines, and passes the source screen the harness applies to untrusted code.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "eval/compiler.h"
#include "eval/source_screen.h"
#include "kernel/abi.h"
#include "kernel/expert_library.h"
#include "kernel/expert_matrices.h"
#include "kernel/heuristic.h"
#include "sparse/features.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

// Distinct programs the spaces and the heuristic give for the test matrices, deduplicated by
// source and capped per template (each compile takes ~0.1 s): every template, its code variants
// (vec, cache, BSR shapes) among the first ones offered.
constexpr int per_template = 7;

std::vector<std::pair<std::string, kernel_program>> distinct_programs() {
  std::vector<std::pair<std::string, kernel_program>> out;
  std::set<std::string> seen;
  std::map<std::string, int> count;
  auto add = [&](const expert_config& c) {
    const std::string key = std::string(op_name(c.op)) + " " + c.name;
    if (count[key] >= per_template) return;
    kernel_program p = emit_program(c);
    const std::string text = parameter_defines(p) + p.source;
    if (!seen.insert(text).second) return;
    ++count[key];
    out.emplace_back(key, std::move(p));
  };
  std::vector<testing::named_matrix> matrices = testing::edge_matrices();
  for (testing::named_matrix& m : testing::family_matrices()) matrices.push_back(std::move(m));
  for (const testing::named_matrix& m : matrices) {
    const matrix_features f = compute_features(m.matrix);
    for (const expert_config& c : expert_space(sparse_op::spmv, f, 1)) add(c);
    add(pick_heuristic(sparse_op::spmv, f, 1));
    for (int k : {8, 37, 128, 256}) {
      for (const expert_config& c : expert_space(sparse_op::spmm, f, k)) add(c);
      add(pick_heuristic(sparse_op::spmm, f, k));
    }
  }
  return out;
}

TEST(ExpertCompile, EveryTemplateCompilesForSm90AndPassesTheScreen) {
  const auto programs = distinct_programs();
  std::set<std::string> templates;
  for (const auto& [name, p] : programs) templates.insert(name);
  EXPECT_EQ(templates.size(), expert_templates().size()) << "a template was never offered";
  compile_options options;
  options.arch = "sm_90";
  for (const auto& [name, p] : programs) {
    const std::string source = parameter_defines(p) + p.source;
    SCOPED_TRACE(name + "\n" + p.to_text());
    const screen_result screen = screen_device_source(source);
    EXPECT_TRUE(screen.ok) << screen.reason;
    const compile_result r = compile_device_source(source, options);
    EXPECT_TRUE(r.ok) << r.error << "\n" << r.log;
    EXPECT_EQ(r.log.find("warning"), std::string::npos) << r.log;
  }
  std::printf("compiled %zu distinct expert programs\n", programs.size());
}

// BSR with the detected block shapes (3x3, 6x6: idle lanes, non-power-of-two loops) and CSR16
// (16-bit offsets), every configuration offered on 3- and 6-dof FEM meshes, through NVRTC: the
// cap above may stop before them, and the emulator's g++ is not NVRTC.
TEST(ExpertCompile, DetectedBsrShapesAndCsr16CompileForSm90) {
  compile_options options;
  options.arch = "sm_90";
  std::set<std::string> seen;
  std::set<int64_t> block_rows;
  int csr16 = 0;
  for (int32_t dof : {3, 6}) {
    generator_spec s = default_spec("fem_mesh");
    s.rows = 1200;
    s.dof = dof;
    const matrix_features f = compute_features(generate_matrix(s));
    for (const auto& [op, k] : {std::pair{sparse_op::spmv, 1}, std::pair{sparse_op::spmm, 64}})
      for (const expert_config& c : expert_space(op, f, k)) {
        if (c.format != format_kind::bsr && c.format != format_kind::csr16) continue;
        const kernel_program p = emit_program(c);
        const std::string source = parameter_defines(p) + p.source;
        if (!seen.insert(source).second) continue;
        SCOPED_TRACE(p.to_text());
        if (c.format == format_kind::bsr) block_rows.insert(c.format_param("r"));
        csr16 += c.format == format_kind::csr16;
        EXPECT_TRUE(screen_device_source(source).ok);
        const compile_result r = compile_device_source(source, options);
        EXPECT_TRUE(r.ok) << r.error << "\n" << r.log;
        EXPECT_EQ(r.log.find("warning"), std::string::npos) << r.log;
      }
  }
  EXPECT_TRUE(block_rows.count(3) && block_rows.count(6));
  EXPECT_GT(csr16, 0);
}

}  // namespace
}  // namespace sparserl
