// Expert programs through the CPU emulator (eval/cpu_runner.h) on the edge-case matrices,
// checked against the double-accumulated reference with poisoned outputs: every template once
// and its code variants (float4 paths, shuffle-cached nonzeros, slot groups, COO carries), on
// empty rows, rows far longer than a block's share, one element, no nonzeros, rectangular.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "eval/cpu_runner.h"
#include "eval/verify.h"
#include "kernel/abi.h"
#include "kernel/expert_library.h"
#include "kernel/expert_matrices.h"
#include "kernel/heuristic.h"
#include "sparse/features.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

expert_config make(const char* name, sparse_op op, format_kind format,
                   std::map<std::string, int64_t> params,
                   std::map<std::string, int64_t> format_params = {}) {
  expert_config c;
  c.name = name;
  c.op = op;
  c.format = format;
  c.params = std::move(params);
  c.format_params = std::move(format_params);
  return c;
}

// csr_split with a small chunk, so rows of a few dozen nonzeros are split across blocks.
expert_config split_spmv(int64_t block, int64_t lanes, int64_t chunk, int64_t slots) {
  return make("csr_split", sparse_op::spmv, format_kind::csr,
              {{"block", block}, {"lanes", lanes}, {"chunk", chunk}, {"slots", slots}});
}

// csr_merge_tiles with tiles of block * items merge items (small ones cross many rows' ends and
// cut long rows into many shares), `slots` scratch slots and a grid of ceil(rows / rows_per_block).
expert_config merge_tiles_spmv(int64_t block, int64_t items, int64_t slots,
                               int64_t rows_per_block) {
  return make(
      "csr_merge_tiles", sparse_op::spmv, format_kind::csr,
      {{"block", block}, {"items", items}, {"slots", slots}, {"rows_per_block", rows_per_block}});
}

// Small blocks and tiles where they exist, so the emulated grids stay small but still have
// several blocks, partial tiles and partial warps.
std::vector<expert_config> spmv_configs() {
  const sparse_op v = sparse_op::spmv;
  return {
      make("csr_scalar", v, format_kind::csr, {{"block", 64}, {"unroll", 4}}),
      make("csr_vector", v, format_kind::csr, {{"block", 128}, {"lanes", 8}}),
      make("csr_vector", v, format_kind::csr, {{"block", 64}, {"lanes", 32}}),
      make("csr_adaptive", v, format_kind::csr,
           {{"block", 64}, {"rows_per_block", 16}, {"stream_cap", 64}, {"long_row", 200}}),
      make("csr_merge", v, format_kind::csr, {{"block", 64}, {"rows_per_block", 8}}),
      split_spmv(64, 4, 32, 1 << 18),
      merge_tiles_spmv(64, 3, 1 << 10, 8),
      make("ell", v, format_kind::ell, {{"block", 64}, {"unroll", 1}}),
      make("sell", v, format_kind::sell, {{"block", 64}}, {{"C", 8}, {"sigma", 16}}),
      make("bsr", v, format_kind::bsr, {{"block", 64}, {"group", 32}}, {{"r", 4}, {"c", 4}}),
      make("bsr", v, format_kind::bsr, {{"block", 64}, {"group", 2}}, {{"r", 2}, {"c", 3}}),
      // Block heights that are not powers of two: idle lanes past slots x r.
      make("bsr", v, format_kind::bsr, {{"block", 64}, {"group", 4}}, {{"r", 3}, {"c", 3}}),
      make("bsr", v, format_kind::bsr, {{"block", 64}, {"group", 32}}, {{"r", 6}, {"c", 6}}),
      make("bsr", v, format_kind::bsr, {{"block", 64}, {"group", 32}}, {{"r", 3}, {"c", 4}}),
      make("csr16_vector", v, format_kind::csr16, {{"block", 64}, {"lanes", 1}}),
      make("csr16_vector", v, format_kind::csr16, {{"block", 128}, {"lanes", 8}}),
      // Stages of 64 and 32 nonzeros: blocks that stream and blocks that read directly; more
      // rows than threads in the second.
      make("csr16_stream", v, format_kind::csr16,
           {{"block", 64}, {"rows_per_block", 16}, {"stream_cap", 64}}),
      make("csr16_stream", v, format_kind::csr16,
           {{"block", 32}, {"rows_per_block", 50}, {"stream_cap", 32}}),
      make("dia", v, format_kind::dia, {{"block", 64}, {"unroll", 1}, {"rows_per_thread", 1}}),
      make("dia", v, format_kind::dia, {{"block", 32}, {"unroll", 4}, {"rows_per_thread", 3}}),
      make("coo", v, format_kind::coo, {{"block", 64}, {"steps", 3}}),
      make("coo4", v, format_kind::coo, {{"block", 64}, {"steps", 1}}),
      make("coo4", v, format_kind::coo, {{"block", 32}, {"steps", 3}}),
      make("hyb", v, format_kind::hyb,
           {{"block", 64}, {"steps", 2}, {"batch", 4}, {"rows_per_thread", 1}}, {{"width", 2}}),
      make("hyb", v, format_kind::hyb,
           {{"block", 32}, {"steps", 1}, {"batch", 3}, {"rows_per_thread", 3}}, {{"width", 0}}),
      make("hyb4", v, format_kind::hyb,
           {{"block", 64}, {"steps", 2}, {"batch", 4}, {"rows_per_thread", 1}}, {{"width", 2}}),
      make("hyb4", v, format_kind::hyb,
           {{"block", 32}, {"steps", 1}, {"batch", 8}, {"rows_per_thread", 2}}, {{"width", 0}}),
      // Fixed grids smaller and larger than the chunks; hub tables of none, a few and odd sizes
      // (the 16-byte copy and its tail).
      make("hcoo", v, format_kind::hcoo, {{"block", 64}, {"grid", 3}, {"steps", 1}}, {{"hubs", 5}}),
      make("hcoo", v, format_kind::hcoo, {{"block", 32}, {"grid", 1}, {"steps", 3}}, {{"hubs", 0}}),
      make("hcoo", v, format_kind::hcoo, {{"block", 64}, {"grid", 40}, {"steps", 2}},
           {{"hubs", 64}}),
  };
}

std::vector<expert_config> spmm_configs() {
  const sparse_op m = sparse_op::spmm;
  return {
      make("csr_rowgroup", m, format_kind::csr,
           {{"block", 64}, {"group", 4}, {"tile", 32}, {"vec", 4}, {"cache", 1}}),
      make("csr_rowgroup", m, format_kind::csr,
           {{"block", 64}, {"group", 16}, {"tile", 32}, {"vec", 1}, {"cache", 0}}),
      make("csr_merge", m, format_kind::csr,
           {{"block", 64}, {"tile", 128}, {"vec", 4}, {"rows_per_block", 8}}),
      make("ell_rowgroup", m, format_kind::ell,
           {{"block", 64}, {"group", 8}, {"tile", 32}, {"vec", 4}}),
      make("sell_rowgroup", m, format_kind::sell,
           {{"block", 64}, {"group", 8}, {"tile", 16}, {"vec", 1}}, {{"C", 8}, {"sigma", 64}}),
      make("bsr_rowgroup", m, format_kind::bsr,
           {{"block", 64}, {"group", 8}, {"tile", 32}, {"vec", 4}}, {{"r", 4}, {"c", 3}}),
      make("bsr_rowgroup", m, format_kind::bsr,
           {{"block", 64}, {"group", 8}, {"tile", 32}, {"vec", 1}}, {{"r", 3}, {"c", 3}}),
      make("csr16_rowgroup", m, format_kind::csr16,
           {{"block", 64}, {"group", 4}, {"tile", 32}, {"vec", 4}}),
      make("csr16_rowgroup", m, format_kind::csr16,
           {{"block", 64}, {"group", 16}, {"tile", 32}, {"vec", 1}}),
  };
}

std::vector<testing::named_matrix> matrices() {
  std::vector<testing::named_matrix> out;
  for (testing::named_matrix& m : testing::edge_matrices())
    if (m.name != "one_row_1x300" && m.name != "tall_2000x3") out.push_back(std::move(m));
  return out;
}

constexpr uint32_t poison_bits = 0xffc0dead;

// Runs `c` on `a` (two trials, fresh inputs) and checks every element of every trial; with
// `expect_correct` false, that some trial's output is refused instead.
void check_emulated(cpu_runner& runner, const expert_config& c, const csr_matrix& a, int k,
                    bool expect_correct = true) {
  SCOPED_TRACE(c.describe() + " k=" + std::to_string(k));
  const kernel_program program = emit_program(c);
  const format_arguments args = build_arguments(c.op, a, program, k);
  run_request r;
  r.op = c.op;
  r.rows = a.rows;
  r.cols = a.cols;
  r.k = k;
  r.program = &program;
  r.args = &args;
  const std::vector<entry_point> eps = entry_points(c.op, c.format);
  for (size_t e = 0; e < eps.size(); ++e) {
    r.entries.push_back(eps[e].name);
    r.geometry.push_back(compute_geometry(program.launches[e], eps[e], args, k));
  }
  r.device_source = parameter_defines(program) + program.source;
  std::memcpy(&r.poison, &poison_bits, sizeof(r.poison));
  std::mt19937 rng(static_cast<uint32_t>(a.rows * 31 + k));
  std::uniform_real_distribution<float> value(-2, 2);
  const size_t width = c.op == sparse_op::spmv ? 1 : static_cast<size_t>(k);
  for (int t = 0; t < 2; ++t) {
    std::vector<float> in(static_cast<size_t>(a.cols) * width);
    for (float& v : in) v = value(rng);
    r.inputs.push_back(std::move(in));
  }
  const run_result result = runner.run(r, run_limits{});
  ASSERT_TRUE(result.ok) << result.failure << "\n" << result.log;
  ASSERT_EQ(result.trials.size(), r.inputs.size());
  bool all_correct = true;
  for (size_t t = 0; t < r.inputs.size(); ++t) {
    const check_result check =
        check_output(compute_reference(c.op, a, r.inputs[t], k), result.trials[t].output);
    all_correct = all_correct && check.ok;
    if (expect_correct) {
      EXPECT_TRUE(check.ok) << check.describe(c.op, k);
    }
    EXPECT_TRUE(result.trials[t].input_unchanged);
    EXPECT_TRUE(result.trials[t].format_unchanged);
  }
  if (!expect_correct) {
    EXPECT_FALSE(all_correct);
  }
}

TEST(ExpertEmulated, SpmvTemplatesAreCorrectOnEdgeMatrices) {
  cpu_runner runner;
  for (const testing::named_matrix& m : matrices()) {
    SCOPED_TRACE(m.name);
    for (const expert_config& c : spmv_configs()) check_emulated(runner, c, m.matrix, 1);
  }
}

TEST(ExpertEmulated, SpmmTemplatesAreCorrectOnEdgeMatrices) {
  cpu_runner runner;
  for (const testing::named_matrix& m : matrices()) {
    SCOPED_TRACE(m.name);
    for (const expert_config& c : spmm_configs())
      for (int k : {37, 64}) check_emulated(runner, c, m.matrix, k);  // scalar and float4 paths
  }
}

// Every configuration the spaces offer (the real block sizes and tiles) and the heuristic's pick,
// on small skewed and block-structured matrices.
TEST(ExpertEmulated, EveryOfferedConfigurationIsCorrect) {
  cpu_runner runner;
  // SpMV on a skewed graph (merge, adaptive, HYB, COO offered); SpMM on a block-structured one
  // (BSR offered). Each distinct source is one g++ build, so one matrix per op.
  const csr_matrix graph = testing::generated("rmat", 160);
  const matrix_features fg = compute_features(graph);
  std::vector<expert_config> spmv = expert_space(sparse_op::spmv, fg, 1);
  spmv.push_back(pick_heuristic(sparse_op::spmv, fg, 1));
  for (const expert_config& c : spmv) check_emulated(runner, c, graph, 1);

  const csr_matrix fem = testing::generated("fem", 160, 4);
  const matrix_features ff = compute_features(fem);
  std::vector<expert_config> spmm = expert_space(sparse_op::spmm, ff, 20);
  spmm.push_back(pick_heuristic(sparse_op::spmm, ff, 20));
  for (const expert_config& c : spmm) check_emulated(runner, c, fem, 20);
}

// The CSR16 templates (csr16_vector, csr16_stream) and BSR as their spaces offer them, and the
// heuristic's pick, on realistic generator families: FEM with 3 and 6 dof per node (BSR 3x3 / 6x6
// detected), meshes, kNN and power-law graphs in several node orders, SpMV and SpMM.
TEST(ExpertEmulated, Csr16AndDetectedBsrTemplatesAreCorrectOnRealisticFamilies) {
  cpu_runner runner;
  struct family_case {
    const char* family;
    int32_t dof;
    const char* order;
  };
  int csr16 = 0, csr16_stream = 0, bsr_odd = 0;
  for (const family_case& fc :
       {family_case{"fem_mesh", 3, "natural"}, family_case{"fem_mesh", 6, "random"},
        family_case{"mesh2d", 1, "rcm"}, family_case{"knn", 1, "natural"},
        family_case{"powerlaw", 1, "random"}}) {
    generator_spec s = default_spec(fc.family);
    s.rows = 600;
    s.dof = fc.dof;
    s.order = fc.order;
    s.seed = 5;
    const csr_matrix a = generate_matrix(s);
    const matrix_features f = compute_features(a);
    SCOPED_TRACE(std::string(fc.family) + " " + fc.order + " dof " + std::to_string(fc.dof));
    for (const auto& [op, k] : {std::pair{sparse_op::spmv, 1}, std::pair{sparse_op::spmm, 20}}) {
      std::vector<expert_config> configs;
      for (const expert_config& c : expert_space(op, f, k))
        if (c.format == format_kind::csr16 || c.format == format_kind::bsr) configs.push_back(c);
      configs.push_back(pick_heuristic(op, f, k));
      for (const expert_config& c : configs) {
        csr16 += c.format == format_kind::csr16;
        csr16_stream += c.name == "csr16_stream";
        bsr_odd += c.format == format_kind::bsr && c.format_param("r") % 2 == 1;
        check_emulated(runner, c, a, k);
      }
    }
  }
  EXPECT_GT(csr16, 0);
  EXPECT_GT(csr16_stream, 0);  // offered on the short rows of the mesh and the kNN graph
  EXPECT_GT(bsr_odd, 0);       // the 3x3 blocks were offered and run
}

// RCSR (gather into the scratch buffer, product on the renumbered matrix, RCM or hubs first): the
// square edge matrices (empty, 1x1, empty rows) and randomly numbered realistic families, every
// offered configuration and a few fixed ones, SpMV and SpMM (scalar and float4 tiles).
TEST(ExpertEmulated, RcsrTemplatesAreCorrectOnSquareMatrices) {
  cpu_runner runner;
  std::vector<int32_t> gaps(97, 0);
  for (size_t r = 0; r < gaps.size(); r += 3) gaps[r] = static_cast<int32_t>(r % 11);
  std::vector<testing::named_matrix> square = {
      {"empty_0x0", csr_from_triplets(0, 0, {})},
      {"no_nonzeros_5x5", csr_from_triplets(5, 5, {})},
      {"one_1x1", csr_from_triplets(1, 1, {{0, 0, 2.5f}})},
      {"empty_rows_97x97", testing::from_lengths(97, gaps, 9)},
  };
  for (const char* family : {"mesh2d", "knn", "powerlaw"}) {
    generator_spec s = default_spec(family);
    // Power-law at 3000 rows: enough for hubs (rows 8x the mean) and the hubs-first template.
    s.rows = std::string(family) == "powerlaw" ? 3000 : 500;
    s.order = "random";
    s.seed = 5;
    square.push_back({std::string(family) + " random order", generate_matrix(s)});
  }
  const sparse_op v = sparse_op::spmv, m = sparse_op::spmm;
  const std::vector<expert_config> fixed_spmv = {
      make("rcsr_vector", v, format_kind::rcsr, {{"block", 64}, {"lanes", 1}}),
      make("rcsr_vector", v, format_kind::rcsr, {{"block", 128}, {"lanes", 8}}),
      make("rcsr_vector", v, format_kind::rcsr, {{"block", 64}, {"lanes", 32}}),
      make("rcsr_hubs_vector", v, format_kind::rcsr, {{"block", 64}, {"lanes", 1}},
           {{"hubs_first", 1}}),
      make("rcsr_hubs_vector", v, format_kind::rcsr, {{"block", 128}, {"lanes", 16}},
           {{"hubs_first", 1}})};
  const std::vector<expert_config> fixed_spmm = {
      make("rcsr_rowgroup", m, format_kind::rcsr,
           {{"block", 64}, {"group", 4}, {"tile", 32}, {"vec", 4}}),
      make("rcsr_rowgroup", m, format_kind::rcsr,
           {{"block", 64}, {"group", 16}, {"tile", 32}, {"vec", 1}})};
  int offered = 0, hubs_offered = 0;
  for (const testing::named_matrix& a : square) {
    SCOPED_TRACE(a.name);
    std::vector<expert_config> spmv = fixed_spmv, spmm = fixed_spmm;
    if (a.matrix.nnz() > 1000) {  // the realistic ones: what the spaces offer, too
      for (const expert_config& c : expert_space(v, compute_features(a.matrix), 1))
        if (c.format == format_kind::rcsr)
          spmv.push_back(c), ++offered, hubs_offered += c.name == "rcsr_hubs_vector";
      for (const expert_config& c : expert_space(m, compute_features(a.matrix), 37))
        if (c.format == format_kind::rcsr) spmm.push_back(c), ++offered;
    }
    for (const expert_config& c : spmv) check_emulated(runner, c, a.matrix, 1);
    for (const expert_config& c : spmm)
      for (int k : {37, 64}) check_emulated(runner, c, a.matrix, k);
  }
  EXPECT_GT(offered, 0);
  EXPECT_GT(hubs_offered, 0);  // the power-law graph in random order
}

// 600 rows: mostly 1..9 nonzeros, every 13th row empty (and the last), three rows of
// 2000..2500 nonzeros (one of them every column) and a few of 40..60, all far above any
// threshold the space derives.
csr_matrix skewed_matrix() {
  std::vector<int32_t> lengths(600);
  for (size_t r = 0; r < lengths.size(); ++r) lengths[r] = 1 + static_cast<int32_t>(r * 7 % 9);
  for (size_t r = 0; r < lengths.size(); r += 13) lengths[r] = 0;
  lengths[599] = 0;
  lengths[1] = 2500;  // every column
  lengths[300] = 2200;
  lengths[598] = 2000;
  for (size_t r : {50, 51, 52, 400}) lengths[r] = 40 + static_cast<int32_t>(r % 21);
  return testing::from_lengths(2500, lengths, 21);
}

// The edge matrices plus two with rows far longer than the rest, for the splitting kernels.
std::vector<testing::named_matrix> skewed_and_edge_matrices() {
  std::vector<testing::named_matrix> out = testing::edge_matrices();
  out.push_back({"skewed_600x2500", skewed_matrix()});
  out.push_back({"circuit", testing::generated("circuit", 800)});
  return out;
}

expert_config split(int64_t width, int64_t block, int64_t group, int64_t tile, int64_t vec,
                    int64_t chunk) {
  return make("hyb_split", sparse_op::spmm, format_kind::hyb,
              {{"block", block}, {"group", group}, {"tile", tile}, {"vec", vec}, {"chunk", chunk}},
              {{"width", width}});
}

// The nnz-split SpMM (hyb_split): every configuration its space offers and the heuristic's pick
// on a skewed matrix, at k = 8, 32, 64, 128.
TEST(ExpertEmulated, SplitSpmmIsCorrectOnASkewedMatrix) {
  cpu_runner runner;
  const csr_matrix a = skewed_matrix();
  const matrix_features f = compute_features(a);
  ASSERT_TRUE(expert_detail::skewed_rows(f));
  ASSERT_EQ(f.row_length_max, 2500);
  ASSERT_GT(f.empty_rows, 40);
  for (int k : {8, 32, 64, 128}) {
    std::vector<expert_config> configs;
    for (const expert_config& c : expert_space(sparse_op::spmm, f, k))
      if (c.name == "hyb_split") configs.push_back(c);
    ASSERT_GE(configs.size(), 4u) << "k=" << k;
    const expert_config pick = pick_heuristic(sparse_op::spmm, f, k);
    EXPECT_EQ(pick.name, "hyb_split");
    configs.push_back(pick);
    for (const expert_config& c : configs) check_emulated(runner, c, a, k);
  }
}

// The COO and HYB SpMV spaces on rows longer than long_tail_row offer the 16-step chunks too.
TEST(ExpertEmulated, LongTailCooAndHybSpmvAreCorrect) {
  cpu_runner runner;
  const csr_matrix a = skewed_matrix();
  const matrix_features f = compute_features(a);
  ASSERT_GT(f.row_length_max, expert_detail::long_tail_row);
  int long_chunks = 0;
  for (const expert_config& c : expert_space(sparse_op::spmv, f, 1)) {
    if (c.name != "coo" && c.name != "hyb" && c.name != "coo4" && c.name != "hyb4") continue;
    long_chunks += c.param("steps") == 16;
    check_emulated(runner, c, a, 1);
  }
  EXPECT_GE(long_chunks, 2);  // one COO, one or more HYB
}

// HCOO as its space offers it (the real grids, blocks and hub tables, 48 to 192 KiB of shared
// memory) on a power-law graph in random order with more columns than a hub table holds.
TEST(ExpertEmulated, OfferedHcooIsCorrectOnAPowerLawGraph) {
  cpu_runner runner;
  generator_spec s = default_spec("powerlaw");
  s.rows = 20000;
  s.order = "random";
  s.seed = 3;
  const csr_matrix a = generate_matrix(s);
  const matrix_features f = compute_features(a);
  ASSERT_GT(f.cols, hub_columns);
  ASSERT_GE(f.hub_share, 0.1);
  int offered = 0;
  for (const expert_config& c : expert_space(sparse_op::spmv, f, 1)) {
    if (c.name != "hcoo") continue;
    ++offered;
    check_emulated(runner, c, a, 1);
  }
  EXPECT_EQ(offered, 6);
}

// csr_split's shares of long rows meet in module scratch that each launch must leave zeroed: two
// trials per program, on skewed rows split into many chunks (or few, owned by every few blocks), a
// scratch of 3 slots (the chunk grows to nnz / 3, so rows up to it take the row path), lanes from
// 2 to a warp (medium rows go to the whole warp), and the configurations the space offers.
TEST(ExpertEmulated, SplitSpmvIsCorrectOnSkewedAndEdgeMatrices) {
  cpu_runner runner;
  const std::vector<testing::named_matrix> matrices = skewed_and_edge_matrices();
  const std::vector<expert_config> configs = {
      split_spmv(64, 2, 32, 1 << 18), split_spmv(32, 8, 100, 1 << 18),
      split_spmv(64, 32, 64, 1 << 18), split_spmv(64, 4, 32, 3),
      split_spmv(32, 2, 1024, 1 << 18)};  // more blocks than chunks: every 3rd owns one
  for (const testing::named_matrix& m : matrices) {
    SCOPED_TRACE(m.name);
    for (const expert_config& c : configs) check_emulated(runner, c, m.matrix, 1);
  }
  const matrix_features f = compute_features(skewed_matrix());
  int offered = 0;
  for (const expert_config& c : expert_space(sparse_op::spmv, f, 1))
    if (c.name == "csr_split") {
      ++offered;
      check_emulated(runner, c, skewed_matrix(), 1);
    }
  EXPECT_EQ(offered, 1);
}

// csr_merge_tiles: rows crossing tiles meet in module scratch that each launch leaves zeroed (two
// trials a program). Tiles of 32 x 1 (every long row in dozens of shares, most tiles inside one
// row), 64 x 3 and 32 x 7; grids of one block a tile, of fewer blocks than tiles (grid-stride) and
// of more; the configurations the space offers; and a scratch smaller than the tiles, whose y is
// left poisoned, so the result is refused rather than wrong in silence.
TEST(ExpertEmulated, MergeTilesSpmvIsCorrectOnSkewedAndEdgeMatrices) {
  cpu_runner runner;
  const std::vector<testing::named_matrix> matrices = skewed_and_edge_matrices();
  const std::vector<expert_config> configs = {merge_tiles_spmv(32, 1, 1 << 12, 16),
                                              merge_tiles_spmv(64, 3, 1 << 10, 1000),
                                              merge_tiles_spmv(32, 7, 1 << 10, 2)};
  for (const testing::named_matrix& m : matrices) {
    SCOPED_TRACE(m.name);
    for (const expert_config& c : configs) check_emulated(runner, c, m.matrix, 1);
  }
  const csr_matrix skewed = skewed_matrix();
  const matrix_features f = compute_features(skewed);
  int offered = 0;
  for (const expert_config& c : expert_space(sparse_op::spmv, f, 1))
    if (c.name == "csr_merge_tiles") {
      ++offered;
      EXPECT_GE(c.param("slots") * c.param("block") * c.param("items"), skewed.rows + skewed.nnz());
      check_emulated(runner, c, skewed, 1);
    }
  EXPECT_EQ(offered, 2);
  // 600 rows + 9,000-odd nonzeros in tiles of 96: ~100 tiles against 4 slots.
  check_emulated(runner, merge_tiles_spmv(32, 3, 4, 16), skewed, 1, /*expect_correct=*/false);
}

// Small blocks, groups and chunks so the emulated grids have many blocks, partial tiles, chunks
// that end mid-row and groups that own no COO entries; the scalar path (k = 37) and float4.
TEST(ExpertEmulated, SplitSpmmSmallBlocksAreCorrectOnEdgeMatrices) {
  cpu_runner runner;
  const std::vector<testing::named_matrix> matrices = skewed_and_edge_matrices();
  const std::vector<expert_config> configs = {
      split(2, 64, 4, 32, 4, 8),     // threshold 2: nearly every row spills into COO
      split(0, 64, 8, 32, 1, 3),     // automatic width; chunks shorter than a group
      split(5, 32, 32, 128, 4, 64),  // a warp per row and chunk, float4
      split(1, 64, 2, 8, 4, 5),      // k-tile of 8, two lanes per group
  };
  for (const testing::named_matrix& m : matrices) {
    SCOPED_TRACE(m.name);
    for (const expert_config& c : configs)
      for (int k : {37, 64}) check_emulated(runner, c, m.matrix, k);
  }
}

}  // namespace
}  // namespace sparserl
