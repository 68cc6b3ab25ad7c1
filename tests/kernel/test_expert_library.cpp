// The expert library's programs against the ABI: every configuration the space offers for a
// range of matrices emits a program that parses back, defines its entry points with the exact
// signatures, and whose format data and launch geometry the harness can build for that matrix.
// (NVRTC compilation: tests/eval/test_expert_compile.cpp; results: test_expert_emulated.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernel/abi.h"
#include "kernel/completion.h"
#include "kernel/expert_library.h"
#include "kernel/expert_matrices.h"
#include "kernel/heuristic.h"
#include "sparse/error.h"
#include "sparse/features.h"
#include "sparse/formats.h"

namespace sparserl {
namespace {

using testing::named_matrix;

std::vector<named_matrix> all_matrices() {
  std::vector<named_matrix> out = testing::edge_matrices();
  for (named_matrix& m : testing::family_matrices()) out.push_back(std::move(m));
  return out;
}

// The checks every emitted program must pass for matrix `a`.
void check_program(const expert_config& c, const csr_matrix& a, int k) {
  SCOPED_TRACE(c.describe());
  const kernel_program p = emit_program(c);
  EXPECT_EQ(p.format, c.format);
  EXPECT_EQ(p.format_params, c.format_params);
  // The program names its configuration, in its canonical text too (labels store that).
  EXPECT_EQ(expert_description(p.to_text()), c.describe());

  const std::vector<entry_point> entries = entry_points(c.op, c.format);
  ASSERT_EQ(p.launches.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries.size() > 1) {
      EXPECT_EQ(p.launches[i].entry, entries[i].name);
    }
    const std::string sig = entry_signature(c.op, c.format, entries[i].name);
    EXPECT_NE(p.source.find(sig + " {"), std::string::npos) << "missing " << sig;
    if (c.op == sparse_op::spmm) {
      EXPECT_GT(p.launches[i].k_per_block, 0);
    }
  }
  EXPECT_EQ(p.source.find('@'), std::string::npos) << "placeholder left in the source";

  const parse_result back = parse_completion(p.to_text(), c.op);
  ASSERT_TRUE(back.program.has_value()) << back.error;
  EXPECT_EQ(back.program->format, p.format);
  EXPECT_EQ(back.program->source, p.source);
  ASSERT_EQ(back.program->launches.size(), p.launches.size());
  for (size_t i = 0; i < p.launches.size(); ++i) {
    const launch_spec& x = back.program->launches[i];
    const launch_spec& y = p.launches[i];
    EXPECT_EQ(x.block, y.block);
    EXPECT_EQ(x.rows_per_block, y.rows_per_block);
    EXPECT_EQ(x.nnz_per_block, y.nnz_per_block);
    EXPECT_EQ(x.k_per_block, y.k_per_block);
  }

  const format_arguments args = build_arguments(c.op, a, p, k);
  for (size_t i = 0; i < entries.size(); ++i)
    EXPECT_NO_THROW(compute_geometry(p.launches[i], entries[i], args, k));
}

TEST(ExpertLibrary, TemplatesHaveUniqueNamesAndCoverEveryFamily) {
  std::set<std::pair<int, std::string>> names;
  std::set<std::pair<int, int>> covered;
  for (const expert_template& t : expert_templates()) {
    EXPECT_TRUE(names.insert({static_cast<int>(t.op), t.name}).second) << t.name;
    covered.insert({static_cast<int>(t.op), static_cast<int>(t.format)});
    EXPECT_FALSE(t.summary.empty()) << t.name;
    for (const expert_param& p : t.params)
      EXPECT_FALSE(p.values.empty()) << t.name << " " << p.name;
  }
  for (format_kind f :
       {format_kind::csr, format_kind::coo, format_kind::ell, format_kind::sell, format_kind::bsr,
        format_kind::dia, format_kind::hyb, format_kind::csr16, format_kind::rcsr})
    EXPECT_TRUE(covered.count({static_cast<int>(sparse_op::spmv), static_cast<int>(f)}))
        << format_name(f);
  for (format_kind f : {format_kind::csr, format_kind::ell, format_kind::sell, format_kind::bsr,
                        format_kind::csr16, format_kind::rcsr})
    EXPECT_TRUE(covered.count({static_cast<int>(sparse_op::spmm), static_cast<int>(f)}))
        << format_name(f);
}

TEST(ExpertLibrary, SpmvSpaceEmitsValidProgramsForEveryMatrix) {
  for (const named_matrix& m : all_matrices()) {
    SCOPED_TRACE(m.name);
    const std::vector<expert_config> space =
        expert_space(sparse_op::spmv, compute_features(m.matrix), 1);
    ASSERT_FALSE(space.empty());
    for (const expert_config& c : space) check_program(c, m.matrix, 1);
  }
}

TEST(ExpertLibrary, SpmmSpaceEmitsValidProgramsForEveryMatrixAndK) {
  for (const named_matrix& m : all_matrices()) {
    for (int k : {1, 8, 37, 128, 256}) {
      SCOPED_TRACE(m.name + " k=" + std::to_string(k));
      const std::vector<expert_config> space =
          expert_space(sparse_op::spmm, compute_features(m.matrix), k);
      ASSERT_FALSE(space.empty());
      for (const expert_config& c : space) {
        EXPECT_LE(c.param("tile"), std::max<int64_t>(32, 2 * k)) << "tile far wider than k";
        check_program(c, m.matrix, k);
      }
    }
  }
}

bool offers(const std::vector<expert_config>& space, format_kind format) {
  for (const expert_config& c : space)
    if (c.format == format) return true;
  return false;
}

TEST(ExpertLibrary, SpacePrunesFormatsByStructure) {
  const matrix_features stencil = compute_features(testing::generated("stencil2d", 900));
  const matrix_features blocks = compute_features(testing::generated("block_diagonal", 512, 8));
  const matrix_features random = compute_features(testing::generated("random", 700));
  std::vector<int32_t> lengths(300, 2);
  lengths[0] = 5000;
  const matrix_features skewed = compute_features(testing::from_lengths(6000, lengths, 1));
  ASSERT_GT(skewed.ell_padding_ratio, 3);

  for (sparse_op op : {sparse_op::spmv, sparse_op::spmm}) {
    SCOPED_TRACE(op_name(op));
    EXPECT_FALSE(offers(expert_space(op, skewed, 32), format_kind::ell));
    EXPECT_TRUE(offers(expert_space(op, stencil, 32), format_kind::ell));
    EXPECT_FALSE(offers(expert_space(op, random, 32), format_kind::bsr));
    EXPECT_TRUE(offers(expert_space(op, blocks, 32), format_kind::bsr));
  }
  EXPECT_TRUE(offers(expert_space(sparse_op::spmv, stencil, 1), format_kind::dia));
  EXPECT_FALSE(offers(expert_space(sparse_op::spmv, random, 1), format_kind::dia));
  EXPECT_TRUE(offers(expert_space(sparse_op::spmv, skewed, 1), format_kind::hyb));
  EXPECT_FALSE(offers(expert_space(sparse_op::spmv, stencil, 1), format_kind::hyb));
  // The nnz-split SpMM (HYB) only for skewed rows.
  EXPECT_TRUE(offers(expert_space(sparse_op::spmm, skewed, 64), format_kind::hyb));
  EXPECT_FALSE(offers(expert_space(sparse_op::spmm, stencil, 64), format_kind::hyb));
  EXPECT_FALSE(offers(expert_space(sparse_op::spmm, random, 64), format_kind::hyb));
  EXPECT_FALSE(offers(expert_space(sparse_op::spmm, blocks, 64), format_kind::hyb));
  // RCSR renumbers rows and columns alike: square matrices only, for both ops, and only in a
  // random-looking order (a stencil's natural order is local already).
  const matrix_features wide =
      compute_features(testing::from_lengths(900, std::vector<int32_t>(300, 2), 1));
  ASSERT_NE(wide.rows, wide.cols);
  for (sparse_op op : {sparse_op::spmv, sparse_op::spmm}) {
    EXPECT_FALSE(offers(expert_space(op, stencil, 32), format_kind::rcsr));
    EXPECT_TRUE(offers(expert_space(op, random, 32), format_kind::rcsr));
    EXPECT_FALSE(offers(expert_space(op, wide, 32), format_kind::rcsr));
  }
}

bool offers_template(const std::vector<expert_config>& space, const std::string& name) {
  return std::any_of(space.begin(), space.end(),
                     [&](const expert_config& c) { return c.name == name; });
}

// CSR16's staged thread-per-row template only for short rows within a 16-bit span: offered on a
// stencil (5 a row), not on rows of 40 (one thread would serialise each) nor on rows spanning more
// than 65535 columns (CSR16 cannot hold them).
TEST(ExpertLibrary, Csr16StreamOnlyForShortRowsThatFitSixteenBits) {
  const matrix_features stencil = compute_features(testing::generated("stencil2d", 900));
  EXPECT_TRUE(offers_template(expert_space(sparse_op::spmv, stencil, 1), "csr16_stream"));
  const matrix_features long_rows =
      compute_features(testing::from_lengths(2000, std::vector<int32_t>(300, 40), 1));
  ASSERT_LE(long_rows.row_span_max, 65535);
  EXPECT_FALSE(offers_template(expert_space(sparse_op::spmv, long_rows, 1), "csr16_stream"));
  const matrix_features wide_span =
      compute_features(testing::from_lengths(200000, std::vector<int32_t>(300, 4), 1));
  ASSERT_GT(wide_span.row_span_max, 65535);
  EXPECT_FALSE(offers_template(expert_space(sparse_op::spmv, wide_span, 1), "csr16_stream"));
  // Every offered stage holds at least the block's rows at the mean length: at 20 a row the
  // 512-row blocks would need 10240 nonzeros, above the 8192 cap, and are not offered.
  const matrix_features twenty =
      compute_features(testing::from_lengths(20000, std::vector<int32_t>(4000, 20), 1));
  for (const matrix_features* f : {&stencil, &twenty}) {
    int offered = 0;
    for (const expert_config& c : expert_space(sparse_op::spmv, *f, 1)) {
      if (c.name != "csr16_stream") continue;
      ++offered;
      EXPECT_GE(static_cast<double>(c.param("stream_cap")),
                f->row_length_mean * static_cast<double>(c.param("rows_per_block")));
    }
    EXPECT_EQ(offered, f == &stencil ? 4 : 3);
  }
}

// The hubs-first numbering only where the order looks random and a few rows are hubs: a power-law
// graph with shuffled ids (also in its natural order, hubs first already, whose columns look just
// as random: then the numbering changes little), not a mesh in random order (rows of like length),
// not a banded matrix, not a non-square matrix; SpMV only.
TEST(ExpertLibrary, HubsFirstRcsrOnlyForRandomlyNumberedSkewedGraphs) {
  auto features = [](const char* family, const char* order) {
    generator_spec s = default_spec(family);
    s.rows = 4000;
    s.order = order;
    return compute_features(generate_matrix(s));
  };
  const matrix_features shuffled = features("powerlaw", "random");
  ASSERT_GT(shuffled.row_length_max, 8 * shuffled.row_length_mean);
  const std::vector<expert_config> space = expert_space(sparse_op::spmv, shuffled, 1);
  EXPECT_TRUE(offers_template(space, "rcsr_hubs_vector"));
  EXPECT_TRUE(offers_template(space, "rcsr_vector"));
  for (const expert_config& c : space)
    if (c.name == "rcsr_hubs_vector") {
      EXPECT_EQ(c.format_params.at("hubs_first"), 1);
      EXPECT_NE(emit_program(c).source.find("spmv_rcsr_gather"), std::string::npos);
    }
  EXPECT_FALSE(offers_template(expert_space(sparse_op::spmv, features("banded", "natural"), 1),
                               "rcsr_hubs_vector"));
  EXPECT_FALSE(offers_template(expert_space(sparse_op::spmv, features("mesh2d", "random"), 1),
                               "rcsr_hubs_vector"));
  EXPECT_FALSE(offers_template(expert_space(sparse_op::spmm, shuffled, 32), "rcsr_hubs_vector"));
  matrix_features wide = shuffled;
  wide.cols += 1;
  EXPECT_FALSE(offers_template(expert_space(sparse_op::spmv, wide, 1), "rcsr_hubs_vector"));
}

TEST(ExpertLibrary, SplitSpaceUsesFloat4AndThresholdAboveTheMean) {
  std::vector<int32_t> lengths(3000, 5);
  for (size_t r = 0; r < lengths.size(); r += 7) lengths[r] = 0;
  lengths[10] = lengths[2000] = 4000;
  const matrix_features f = compute_features(testing::from_lengths(6000, lengths, 4));
  ASSERT_TRUE(expert_detail::skewed_rows(f));
  int offered = 0;
  for (const expert_config& c : expert_space(sparse_op::spmm, f, 64)) {
    if (c.name != "hyb_split") continue;
    ++offered;
    SCOPED_TRACE(c.describe());
    EXPECT_EQ(c.param("vec"), 4);  // k = 64: 16-byte B loads
    EXPECT_EQ(c.param("tile"), 64);
    const int64_t width = c.format_param("width");
    EXPECT_TRUE(width == 0 || (width > f.row_length_mean && width < 4000));
  }
  EXPECT_GE(offered, 4);
}

TEST(ExpertLibrary, VectorLanesFollowTheRowLength) {
  std::vector<int32_t> short_rows(500, 3), long_rows(500, 200);
  for (const auto& [lengths, lo, hi] :
       {std::tuple{short_rows, 2, 8}, std::tuple{long_rows, 32, 32}}) {
    const matrix_features f = compute_features(testing::from_lengths(1000, lengths, 2));
    for (const expert_config& c : expert_space(sparse_op::spmv, f, 1)) {
      if (c.name != "csr_vector") continue;
      EXPECT_GE(c.param("lanes"), lo);
      EXPECT_LE(c.param("lanes"), hi);
    }
  }
}

expert_config valid_vector() {
  expert_config c;
  c.name = "csr_vector";
  c.op = sparse_op::spmv;
  c.format = format_kind::csr;
  c.params = {{"block", 256}, {"lanes", 8}};
  return c;
}

void expect_rejected(const expert_config& c, const std::string& fragment) {
  try {
    emit_program(c);
    ADD_FAILURE() << "accepted " << c.describe();
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ExpertLibrary, EmitRejectsBadConfigurations) {
  EXPECT_NO_THROW(emit_program(valid_vector()));
  expert_config c = valid_vector();
  c.name = "csr_telepathy";
  expect_rejected(c, "unknown template");
  c = valid_vector();
  c.op = sparse_op::spmm;
  expect_rejected(c, "spmv template");
  c = valid_vector();
  c.format = format_kind::ell;
  expect_rejected(c, "emits CSR");
  c = valid_vector();
  c.params.erase("lanes");
  expect_rejected(c, "missing parameter 'lanes'");
  c = valid_vector();
  c.params["warp_magic"] = 1;
  expect_rejected(c, "unknown parameter 'warp_magic'");
  c = valid_vector();
  c.params["lanes"] = 3;
  expect_rejected(c, "power of two");
  c = valid_vector();
  c.params["block"] = 100;
  expect_rejected(c, "block must be");
  c = valid_vector();
  c.format_params["C"] = 32;
  expect_rejected(c, "unknown format parameter 'C'");
}

// The source below the `// expert:` line, which names the configuration.
std::string body_of(const expert_config& c) {
  const std::string source = emit_program(c).source;
  return source.substr(source.find('\n') + 1);
}

// What the FORMAT and LAUNCH lines state (block, r x c, C, lanes = block / rows_per_block, steps =
// nnz_per_block / block, tile = k_per_block, ...) the kernel takes from the harness's SPARSERL_*
// macros, so configurations that differ only there share one text: a policy cannot contradict
// its header (a PPO policy wrote `kR = 4` under `FORMAT: BSR r=3 c=3`).
TEST(ExpertLibrary, HeaderStatedValuesComeFromTheHarnessMacros) {
  const auto spmv = sparse_op::spmv;
  const std::vector<std::pair<expert_config, expert_config>> same_text = {
      {expert_config{"csr_vector", spmv, format_kind::csr, {}, {{"block", 256}, {"lanes", 8}}},
       expert_config{"csr_vector", spmv, format_kind::csr, {}, {{"block", 128}, {"lanes", 2}}}},
      {expert_config{
           "bsr", spmv, format_kind::bsr, {{"r", 3}, {"c", 3}}, {{"block", 128}, {"group", 4}}},
       expert_config{
           "bsr", spmv, format_kind::bsr, {{"r", 6}, {"c", 6}}, {{"block", 256}, {"group", 32}}}},
      {expert_config{"sell", spmv, format_kind::sell, {{"C", 8}, {"sigma", 1}}, {{"block", 128}}},
       expert_config{
           "sell", spmv, format_kind::sell, {{"C", 32}, {"sigma", 256}}, {{"block", 256}}}},
      {expert_config{"coo", spmv, format_kind::coo, {}, {{"block", 128}, {"steps", 1}}},
       expert_config{"coo", spmv, format_kind::coo, {}, {{"block", 256}, {"steps", 16}}}},
      {expert_config{"dia",
                     spmv,
                     format_kind::dia,
                     {},
                     {{"block", 128}, {"unroll", 4}, {"rows_per_thread", 1}}},
       expert_config{"dia",
                     spmv,
                     format_kind::dia,
                     {},
                     {{"block", 512}, {"unroll", 4}, {"rows_per_thread", 4}}}},
      {expert_config{"csr_rowgroup",
                     sparse_op::spmm,
                     format_kind::csr,
                     {},
                     {{"block", 128}, {"group", 2}, {"tile", 32}, {"vec", 4}, {"cache", 0}}},
       expert_config{"csr_rowgroup",
                     sparse_op::spmm,
                     format_kind::csr,
                     {},
                     {{"block", 256}, {"group", 8}, {"tile", 64}, {"vec", 4}, {"cache", 0}}}}};
  for (const auto& [a, b] : same_text) {
    SCOPED_TRACE(a.describe() + " vs " + b.describe());
    EXPECT_NE(emit_program(a).to_text(), emit_program(b).to_text());  // the headers differ
    EXPECT_EQ(body_of(a), body_of(b));
  }
  // A value the header does not state stays in the text: DIA's unroll factor.
  EXPECT_NE(body_of(expert_config{"dia",
                                  spmv,
                                  format_kind::dia,
                                  {},
                                  {{"block", 128}, {"unroll", 1}, {"rows_per_thread", 1}}}),
            body_of(same_text[4].first));
}

// The values the header lines do not state (unroll factors, vector widths, chunk sizes) are each
// declared once, as a constexpr above the first kernel, and what follows from a header value (the
// shuffle mask of a lane group) is computed from it in the kernel, so every configuration of a
// template shares its kernels' text: a policy states each value once, next to the others, and
// cannot write one in a loop that contradicts it (DIA programs of an H100 run, 2026-12-06, named
// unroll 4 in their expert line and wrote `#pragma unroll 8` in the loop, 12-22% slower; a mask
// written for another group size than the LAUNCH line's would shuffle with lanes outside it).
TEST(ExpertLibrary, EveryTuningValueIsDeclaredAboveTheKernels) {
  std::map<std::string, std::string> kernels_of;  // template and op -> text from its first kernel
  size_t programs = 0;
  for (const named_matrix& m : all_matrices()) {
    const matrix_features f = compute_features(m.matrix);
    for (const auto& [op, k] : {std::pair{sparse_op::spmv, 1}, std::pair{sparse_op::spmm, 8},
                                std::pair{sparse_op::spmm, 64}}) {
      for (const expert_config& c : expert_space(op, f, k)) {
        const std::string source = emit_program(c).source;
        const size_t first_kernel = source.find("extern \"C\"");
        ASSERT_NE(first_kernel, std::string::npos) << c.describe();
        const std::string kernels = source.substr(first_kernel);
        // csr_rowgroup's cache picks one of two loops: a choice of code, not a value.
        const std::string variant =
            c.params.count("cache") ? " cache=" + std::to_string(c.param("cache")) : "";
        const auto [it, added] = kernels_of.emplace(c.name + " " + op_name(op) + variant, kernels);
        if (!added) {
          EXPECT_EQ(it->second, kernels) << m.name << ": " << c.describe();
        }
        ++programs;
      }
    }
  }
  EXPECT_GT(kernels_of.size(), 20u);
  EXPECT_GT(programs, 10 * kernels_of.size());
}

TEST(ExpertLibrary, DescribeNamesTemplateOpFormatAndEveryValue) {
  EXPECT_EQ(valid_vector().describe(), "csr_vector spmv CSR block=256 lanes=8");
  for (const expert_config& c :
       expert_space(sparse_op::spmm, compute_features(testing::generated("fem", 600, 4)), 64)) {
    const std::string d = c.describe();
    EXPECT_EQ(d.rfind(c.name + " spmm ", 0), 0u) << d;
    for (const auto& [key, value] : c.params)
      EXPECT_NE(d.find(key + "=" + std::to_string(value)), std::string::npos) << d;
  }
}

// The rollout log names a sampled program by its "// expert:" line only when the program is that
// config's (train/rollout_log.h): every description must parse back to its config.
TEST(ExpertLibrary, DescriptionsParseBackToTheirConfig) {
  size_t checked = 0;
  for (const named_matrix& m : all_matrices()) {
    const matrix_features f = compute_features(m.matrix);
    for (sparse_op op : {sparse_op::spmv, sparse_op::spmm})
      for (const expert_config& c : expert_space(op, f, 32)) {
        const std::optional<expert_config> back = parse_expert_description(c.describe());
        ASSERT_TRUE(back.has_value()) << c.describe();
        EXPECT_EQ(back->name, c.name);
        EXPECT_EQ(back->op, c.op);
        EXPECT_EQ(back->format, c.format);
        EXPECT_EQ(back->format_params, c.format_params) << c.describe();
        EXPECT_EQ(back->params, c.params) << c.describe();
        ++checked;
      }
  }
  EXPECT_GT(checked, 500u);
  for (const char* bad :
       {"", "csr_vector", "csr_vector spmv", "nope spmv CSR block=256 lanes=8",
        "csr_vector spmm CSR block=256 lanes=8",  // the SpMV template's name
        "csr_vector spmv ELL block=256 lanes=8", "csr_vector spmv CSR block=256",
        "csr_vector spmv CSR block=256 lanes=8 tile=4",
        "csr_vector spmv CSR block=256 block=128 lanes=8", "csr_vector spmv CSR block=2x6 lanes=8",
        "csr_vector spmv CSR block lanes=8", "csr_vector spmv CSR =256 lanes=8"})
    EXPECT_FALSE(parse_expert_description(bad).has_value()) << bad;
}

TEST(ExpertHeuristic, PicksFollowTheStructure) {
  auto pick = [](const csr_matrix& a, sparse_op op = sparse_op::spmv) {
    return pick_heuristic(op, compute_features(a), 64);
  };
  EXPECT_EQ(pick(testing::generated("stencil2d", 900)).format, format_kind::dia);
  const expert_config blocks = pick(testing::generated("block_diagonal", 512, 8));
  EXPECT_EQ(blocks.format, format_kind::bsr);
  EXPECT_EQ(blocks.format_params.at("r"), 8);
  std::vector<int32_t> lengths(300, 2);
  lengths[0] = 5000;
  const csr_matrix skewed = testing::from_lengths(6000, lengths, 1);
  // SpMV: COO splits every row across warps (faster than merge-path CSR on the H200 suite).
  EXPECT_EQ(pick(skewed).name, "coo");
  // A regular body with a few huge rows (low Gini, rows past long_tail_row): coo4, four entries
  // a lane; the same body with rows of ~1700 (as LP): COO.
  std::vector<int32_t> body(3000, 6);
  for (size_t r = 0; r < body.size(); r += 5) body[r] = 4;
  body[7] = body[1501] = 2500;  // ~1700 distinct columns of 6000
  EXPECT_EQ(pick(testing::from_lengths(6000, body, 5)).name, "coo");
  body[7] = body[1501] = 6000;  // every column
  // ... on a matrix of 1M rows or more (the rule reads the features: scaled here); below, COO
  // (timed circuit labels of 113k-388k rows: COO within 0.995x of the fastest, HYB 0.45-0.71x).
  matrix_features body_features = compute_features(testing::from_lengths(6000, body, 5));
  EXPECT_EQ(pick_heuristic(sparse_op::spmv, body_features, 1).name, "coo");
  body_features.rows = 2000000;
  const expert_config coo4 = pick_heuristic(sparse_op::spmv, body_features, 1);
  EXPECT_EQ(coo4.name, "coo4");
  EXPECT_EQ(coo4.params.at("steps"), 2);
  // A graph whose most referenced columns hold a fifth of the nonzeros (R-MAT), on 500k columns
  // or more (scaled): HCOO with the largest hub table; a more even one keeps coo4.
  matrix_features power = compute_features(testing::generated("rmat", 16384));
  ASSERT_TRUE(expert_detail::skewed_rows(power));
  ASSERT_GE(power.hub_share, 0.2);
  EXPECT_NE(pick_heuristic(sparse_op::spmv, power, 1).name, "hcoo");  // 20000 columns
  power.rows = power.cols = 1000000;
  const expert_config hcoo = pick_heuristic(sparse_op::spmv, power, 1);
  EXPECT_EQ(hcoo.name, "hcoo");
  EXPECT_EQ(hcoo.format_params.at("hubs"), hub_coo_matrix::max_hubs);
  EXPECT_EQ(hcoo.params.at("grid"), 132);
  body_features.cols = 2000000;
  body_features.hub_share = 0.19;
  EXPECT_EQ(pick_heuristic(sparse_op::spmv, body_features, 1).name, "coo4");
  // SpMM: the nnz split, long rows' tails in HYB's COO part spread over lane groups, in long
  // chunks when the long rows are few beside an even body (low Gini), short ones otherwise.
  const expert_config split = pick(skewed, sparse_op::spmm);
  EXPECT_EQ(split.name, "hyb_split");
  EXPECT_EQ(split.format, format_kind::hyb);
  EXPECT_GT(compute_features(skewed).row_length_gini, 0.6);
  EXPECT_EQ(split.params.at("chunk"), 32);
  const expert_config body_split = pick(testing::from_lengths(6000, body, 5), sparse_op::spmm);
  EXPECT_EQ(body_split.name, "hyb_split");
  EXPECT_EQ(body_split.params.at("chunk"), 128);
  // SpMM on blocks: 8 lanes per block row; on uneven rows that are not power-law: merge-path.
  EXPECT_EQ(pick(testing::generated("block_diagonal", 512, 8), sparse_op::spmm).params.at("group"),
            8);
  std::vector<int32_t> uneven(400, 8);
  for (size_t r = 0; r < uneven.size(); r += 50) uneven[r] = 150;
  const matrix_features uf = compute_features(testing::from_lengths(3000, uneven, 9));
  ASSERT_FALSE(expert_detail::skewed_rows(uf));
  EXPECT_EQ(pick(testing::from_lengths(3000, uneven, 9), sparse_op::spmm).name, "csr_merge");
  std::vector<int32_t> even(400, 64);
  EXPECT_EQ(pick(testing::from_lengths(1000, even, 3)).name, "ell");  // no padding at all
  // Even rows whose columns lie near the row (a kNN graph in natural or RCM order): CSR, which
  // reuses x in cache; in random order RCSR, which renumbers it back into a local order.
  generator_spec knn = default_spec("knn");
  knn.rows = 4000;
  for (const char* order : {"natural", "rcm", "random"}) {
    knn.order = order;
    const matrix_features kf = compute_features(generate_matrix(knn));
    ASSERT_LE(kf.ell_padding_ratio, 1.2) << order;
    const std::string name = pick_heuristic(sparse_op::spmv, kf, 1).name;
    if (std::string(order) == "random")
      EXPECT_EQ(name, "rcsr_vector");
    else
      EXPECT_TRUE(name == "csr_scalar" || name == "csr_vector") << order << ": " << name;
  }
  // RCSR only where a local order exists and rows pay for the gather: not for even random rows
  // (no local order: ELL), not for a road network in random order (~3 per row), not for SpMM.
  const matrix_features random_rows = compute_features(testing::from_lengths(1000, even, 3));
  EXPECT_GT(random_rows.column_distance_mean, random_order_distance);
  EXPECT_GT(random_rows.renumbered_distance_mean * 8, random_rows.column_distance_mean);
  generator_spec road = default_spec("road");
  road.rows = 4000;
  road.order = "random";
  const matrix_features rf = compute_features(generate_matrix(road));
  ASSERT_LT(rf.row_length_mean, 5);
  // ... but ELL in blocks of 128 (short rows a third padded at most: the suite's road in random
  // order, where csr_vector was 7-12% slower).
  ASSERT_GT(rf.ell_padding_ratio, 1.2);
  ASSERT_LE(rf.ell_padding_ratio, 4.0 / 3.0);
  const expert_config road_pick = pick_heuristic(sparse_op::spmv, rf, 1);
  EXPECT_EQ(road_pick.name, "ell");
  EXPECT_EQ(road_pick.params.at("block"), 128);
  knn.order = "random";
  EXPECT_NE(pick_heuristic(sparse_op::spmm, compute_features(generate_matrix(knn)), 32).format,
            format_kind::rcsr);
  // Rows of 5-12 (a triangle mesh in random order, ~7): RCSR only from 300k rows; below, the
  // gather costs more than x's random reads (timed labels: csr_vector the fastest there).
  generator_spec mesh = default_spec("mesh2d");
  mesh.rows = 4000;
  mesh.order = "random";
  matrix_features mf = compute_features(generate_matrix(mesh));
  ASSERT_GT(mf.row_length_mean, 5);
  ASSERT_LT(mf.row_length_mean, 12);
  const expert_config small_mesh = pick_heuristic(sparse_op::spmv, mf, 1);
  EXPECT_EQ(small_mesh.name, "csr_vector");
  EXPECT_EQ(small_mesh.params.at("lanes"), 4);
  mf.rows = mf.cols = 400000;
  EXPECT_EQ(pick_heuristic(sparse_op::spmv, mf, 1).name, "rcsr_vector");
  // DIA: two rows per thread once the rows pass the H200's resident threads (270,336).
  matrix_features stencil = compute_features(testing::generated("stencil2d", 900));
  stencil.rows = stencil.cols = 262144;
  stencil.nnz = 5 * stencil.rows;
  EXPECT_EQ(pick_heuristic(sparse_op::spmv, stencil, 1).params.at("rows_per_thread"), 1);
  stencil.rows = stencil.cols = 280000;
  stencil.nnz = 5 * stencil.rows;
  EXPECT_EQ(pick_heuristic(sparse_op::spmv, stencil, 1).params.at("rows_per_thread"), 2);
  for (size_t r = 0; r < even.size(); ++r) even[r] = 32 + static_cast<int32_t>(r % 64);
  // Medium uneven rows: csr_vector (CSR16's csr16_vector is offered to the tuner, not picked
  // until timed).
  EXPECT_EQ(pick(testing::from_lengths(1000, even, 3)).name, "csr_vector");
  EXPECT_EQ(pick(csr_from_triplets(4, 4, {})).name, "csr_scalar");
}

// FEM with k dof per node: the spaces offer BSR k x k from the detected block shape (3x3, 6x6: no
// power of two fits those blocks), SpMV and SpMM; the heuristic's pick (the measured rules) is a
// correct program there.
TEST(ExpertHeuristic, FemMeshDetectedBlockShapeIsOffered) {
  for (int32_t dof : {3, 6}) {
    generator_spec s = default_spec("fem_mesh");
    s.rows = 3000;
    s.dof = dof;
    s.order = "random";
    const csr_matrix a = generate_matrix(s);
    for (const auto& [op, k] : {std::pair{sparse_op::spmv, 1}, std::pair{sparse_op::spmm, 64}}) {
      check_program(pick_heuristic(op, compute_features(a), k), a, k);
    }
    // SpMV picks it (timed fastest on the H200's FEM matrices), a lane group of the next power of
    // two per block row: 3x3 with 4, 6x6 with 8 — ahead of RCSR, though the order is random.
    const expert_config spmv = pick_heuristic(sparse_op::spmv, compute_features(a), 1);
    EXPECT_EQ(spmv.format, format_kind::bsr) << spmv.describe();
    EXPECT_EQ(spmv.format_params.at("r"), dof);
    EXPECT_EQ(spmv.format_params.at("c"), dof);
    EXPECT_EQ(spmv.params.at("group"), dof == 3 ? 4 : 8);
    // The spaces offer it too (the tuner's choice), SpMV and SpMM.
    for (const auto& [op, k] : {std::pair{sparse_op::spmv, 1}, std::pair{sparse_op::spmm, 64}}) {
      const std::vector<expert_config> space = expert_space(op, compute_features(a), k);
      EXPECT_TRUE(std::any_of(space.begin(), space.end(),
                              [&](const expert_config& c) {
                                return c.format == format_kind::bsr &&
                                       c.format_params.at("r") == dof;
                              }))
          << op_name(op) << " dof " << dof;
    }
  }
}

TEST(ExpertHeuristic, EveryPickIsAValidProgram) {
  for (const named_matrix& m : all_matrices()) {
    SCOPED_TRACE(m.name);
    const matrix_features f = compute_features(m.matrix);
    check_program(pick_heuristic(sparse_op::spmv, f, 1), m.matrix, 1);
    for (int k : {1, 8, 32, 256}) check_program(pick_heuristic(sparse_op::spmm, f, k), m.matrix, k);
  }
}

}  // namespace
}  // namespace sparserl
