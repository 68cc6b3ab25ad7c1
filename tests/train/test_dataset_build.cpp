// Building the SFT set on the CPU: generated matrices across the families, labels that the CPU
// evaluator passes on the very matrix the sample describes, and splits decided by the matrix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "eval/cpu_runner.h"
#include "eval/evaluator.h"
#include "scratch_dir.h"
#include "sparse/error.h"
#include "sparse/generators.h"
#include "sparse/matrix_market.h"
#include "train/data_split.h"
#include "train/dataset_build.h"

namespace sparserl::train {
namespace {

using ::testing::HasSubstr;

dataset_build_options quiet_options() {
  dataset_build_options o;
  o.progress = false;
  o.threads = 2;
  return o;
}

TEST(dataset_build, generated_sets_draw_from_the_named_families_only) {
  const std::vector<std::string> wanted = realistic_families();
  const std::vector<matrix_item> a = generated_matrices(36, 5, 200, wanted);
  ASSERT_EQ(a.size(), 36u);
  std::set<std::string> seen;
  for (const matrix_item& item : a) {
    seen.insert(item.family());
    EXPECT_NO_THROW(validate_csr(item.load())) << item.name;
  }
  EXPECT_EQ(seen, std::set<std::string>(wanted.begin(), wanted.end()));
  const std::vector<matrix_item> held_out = generated_matrices(6, 5, 200, {"road", "knn"});
  for (const matrix_item& item : held_out)
    EXPECT_TRUE(item.family() == "road" || item.family() == "knn");
  EXPECT_THROW(generated_matrices(3, 1, 64, {"mesh2d", "nope"}), error);
}

TEST(dataset_build, generated_sets_are_distinct_cover_every_family_and_repeat_with_the_seed) {
  const std::vector<matrix_item> a = generated_matrices(27, 5, 128);
  const std::vector<matrix_item> b = generated_matrices(27, 5, 128);
  const std::vector<matrix_item> c = generated_matrices(27, 6, 128);
  ASSERT_EQ(a.size(), 27u);
  std::set<std::string> families;
  std::set<uint64_t> hashes;
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    families.insert(a[i].family());
    const csr_matrix m = a[i].load();
    EXPECT_GE(m.rows, 8);                     // stencils round rows to a grid
    EXPECT_LE(m.rows, 128 * 5) << a[i].name;  // lp's columns grow, rows do not
    hashes.insert(matrix_structure_hash(m));
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(matrix_structure_hash(m), matrix_structure_hash(b[i].load()));
    differs |= matrix_structure_hash(m) != matrix_structure_hash(c[i].load());
  }
  EXPECT_EQ(families.size(), classic_families().size());  // the default: the classic ones
  EXPECT_EQ(hashes.size(), a.size());
  EXPECT_TRUE(differs);
  EXPECT_THROW(generated_matrices(5, 1, 8), error);  // below the smallest size
}

TEST(dataset_build, generated_items_keep_their_spec_not_their_matrix_and_any_thread_count_agrees) {
  // 1 thread makes 4 matrices a round, 3 threads 12: the same attempts in the same order.
  const std::vector<matrix_item> one = generated_matrices(30, 7, 300, {}, 16, 1);
  const std::vector<matrix_item> three = generated_matrices(30, 7, 300, {}, 16, 3);
  ASSERT_EQ(one.size(), 30u);
  ASSERT_EQ(three.size(), 30u);
  for (size_t i = 0; i < one.size(); ++i) {
    SCOPED_TRACE(one[i].name);
    EXPECT_EQ(one[i].matrix, nullptr);  // a set of large matrices is never held at once
    ASSERT_TRUE(one[i].spec.has_value());
    EXPECT_EQ(one[i].name, three[i].name);
    const csr_matrix m = one[i].load();
    EXPECT_EQ(matrix_structure_hash(m), matrix_structure_hash(generate_matrix(*one[i].spec)));
    EXPECT_EQ(matrix_structure_hash(m), matrix_structure_hash(three[i].load()));
  }
}

TEST(dataset_build, block_sizes_replace_only_the_block_of_families_that_have_one) {
  const std::vector<std::string> families = {"block_diagonal", "fem", "mesh2d"};
  const std::vector<matrix_item> plain = generated_matrices(36, 9, 200, families, 60);
  const std::vector<matrix_item> sized = generated_matrices(36, 9, 200, families, 60, 2, {3, 5});
  std::map<uint64_t, const matrix_item*> before;  // by the spec's own seed: one per draw
  for (const matrix_item& item : plain) before[item.spec->seed] = &item;
  std::set<int32_t> blocks;
  int compared = 0;
  for (const matrix_item& item : sized) {
    const generator_spec& s = *item.spec;
    if (s.family != "mesh2d") {
      ASSERT_TRUE(s.block == 3 || s.block == 5) << item.name << " block " << s.block;
      blocks.insert(s.block);
      // A dense block on the diagonal: the first row holds exactly `block` nonzeros.
      if (s.family == "block_diagonal") {
        const csr_matrix m = item.load();
        EXPECT_EQ(m.row_ptr[1] - m.row_ptr[0], s.block) << item.name;
      }
    }
    auto it = before.find(s.seed);
    if (it == before.end()) continue;
    ++compared;
    EXPECT_EQ(s.rows, it->second->spec->rows) << item.name;
    EXPECT_EQ(s.order, it->second->spec->order) << item.name;
    if (s.family == "mesh2d") {  // no block: the very same matrix
      EXPECT_EQ(matrix_structure_hash(item.load()), matrix_structure_hash(it->second->load()));
    }
  }
  EXPECT_EQ(blocks, (std::set<int32_t>{3, 5}));
  EXPECT_GE(compared, 30);
  EXPECT_THROW(generated_matrices(3, 1, 64, families, 16, 1, {0}), error);
  EXPECT_THROW(generated_matrices(3, 1, 64, families, 16, 1, {65}), error);
}

TEST(dataset_build, the_split_follows_the_matrix_not_its_name_position_or_data_set) {
  const std::vector<matrix_item> items = generated_matrices(40, 3, 96);
  dataset_build_options o = quiet_options();
  o.label = labeller::heuristic;
  o.verify = false;
  o.val_fraction = 0.3;
  const dataset_build_result forward = build_sft_dataset(items, nullptr, {}, o);
  // The same matrices, renamed and in reverse order, in a larger set (first, so that none is
  // left out as a twin of the others).
  std::vector<matrix_item> other;
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    matrix_item renamed = *it;
    renamed.name = "renamed/" + it->name;
    other.push_back(renamed);
  }
  for (const matrix_item& extra : generated_matrices(10, 99, 96)) other.push_back(extra);
  const dataset_build_result backward = build_sft_dataset(other, nullptr, {}, o);
  std::map<std::string, std::string> split_by_name;
  int val = 0;
  for (const sft_sample& s : forward.samples) {
    split_by_name[s.name] = s.split;
    val += s.split == "val";
    EXPECT_EQ(s.split, split_of(matrix_structure_hash(to_matrix(s)), 0.3));
  }
  EXPECT_GT(val, 3);  // about 12 of 40
  EXPECT_LT(val, 24);
  int matched = 0;
  for (const sft_sample& s : backward.samples) {
    if (s.name.rfind("renamed/", 0) != 0) continue;
    EXPECT_EQ(s.split, split_by_name.at(s.name.substr(8))) << s.name;
    ++matched;
  }
  EXPECT_EQ(matched, 40);
}

TEST(dataset_build, cpu_labels_are_correct_on_the_matrix_the_sample_describes) {
  std::vector<matrix_item> items;
  for (const std::string family : {"banded", "rmat", "fem"}) {
    generator_spec spec;
    spec.family = family;
    spec.rows = 150;
    spec.block = 3;
    items.push_back({family, "", std::make_shared<csr_matrix>(generate_matrix(spec)), spec});
  }
  cpu_runner runner;
  const dataset_build_result r = build_sft_dataset(items, &runner, {}, quiet_options());
  EXPECT_EQ(r.method, "heuristic verified on cpu");
  ASSERT_EQ(r.samples.size(), 3u);
  evaluator check(runner);
  std::set<std::string> formats;
  for (const sft_sample& s : r.samples) {
    SCOPED_TRACE(s.name);
    EXPECT_EQ(s.label, "heuristic");
    EXPECT_EQ(s.code.rfind("FORMAT: " + s.format, 0), 0u);
    ASSERT_EQ(s.candidates.size(), 1u);
    EXPECT_TRUE(s.candidates[0].correct);
    EXPECT_FALSE(s.candidates[0].time_ms);  // the emulator does not time
    EXPECT_EQ(s.extra["family"], s.name);
    // Judged afresh on to_matrix(s): the pattern with its own values, not the generator's.
    const csr_matrix m = to_matrix(s);
    EXPECT_EQ(m.nnz(), items[&s - r.samples.data()].matrix->nnz());
    const verdict v = check.evaluate({s.op, &m, s.k, "check:" + s.name}, s.code);
    EXPECT_TRUE(v.correct) << v.failure;
    formats.insert(s.format);
  }
  EXPECT_GE(formats.size(), 2u);  // the heuristic picks by structure: not one format for all
}

TEST(dataset_build, duplicates_and_oversized_matrices_are_left_out_with_a_warning) {
  testing::scratch_dir dir;
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  generator_spec spec;
  spec.family = "stencil2d";
  spec.rows = 64;
  write_matrix_market(dir / "b/grid.mtx", generate_matrix(spec));
  write_matrix_market(dir / "a/same_grid.mtx.gz", generate_matrix(spec));
  spec.rows = 400;
  write_matrix_market(dir / "big.mtx", generate_matrix(spec));
  testing::write_text(dir / "notes.txt", "not a matrix");
  const std::vector<matrix_item> items = matrix_files(dir.path().string());
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].name, "a/same_grid.mtx.gz");  // sorted by path
  EXPECT_EQ(items[1].name, "b/grid.mtx");
  EXPECT_EQ(items[2].name, "big.mtx");
  dataset_build_options o = quiet_options();
  o.label = labeller::heuristic;
  o.verify = false;
  o.max_nnz = 1000;
  const dataset_build_result r = build_sft_dataset(items, nullptr, {}, o);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].name, "a/same_grid.mtx.gz");
  EXPECT_EQ(r.duplicates, 1);
  EXPECT_EQ(r.too_large, 1);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_THAT(r.warnings[0], HasSubstr("b/grid.mtx: same structure as a/same_grid.mtx.gz"));
  EXPECT_THAT(r.warnings[1], HasSubstr("big.mtx: 1920 nonzeros, more than --max-matrix-nnz 1000"));
}

// Generated matrices above --max-nnz are kept, written as their recipe; smaller ones keep their
// coordinates and the recipe beside them. Rows come from [min_rows, max_rows], the same on any
// number of threads.
TEST(dataset_build, large_generated_matrices_are_stored_by_their_generator) {
  const std::vector<matrix_item> items = generated_matrices(6, 11, 3000, {"knn", "road"}, 2000, 1);
  const std::vector<matrix_item> threaded =
      generated_matrices(6, 11, 3000, {"knn", "road"}, 2000, 3);
  ASSERT_EQ(items.size(), 6u);
  ASSERT_EQ(threaded.size(), 6u);
  for (size_t i = 0; i < items.size(); ++i) {
    ASSERT_TRUE(items[i].spec);
    EXPECT_GE(items[i].spec->rows, 2000);
    EXPECT_LE(items[i].spec->rows, 3000);
    EXPECT_EQ(items[i].name, threaded[i].name);
    EXPECT_EQ(matrix_structure_hash(items[i].load()), matrix_structure_hash(threaded[i].load()));
  }
  dataset_build_options o = quiet_options();
  o.label = labeller::heuristic;
  o.verify = false;
  o.max_nnz = 15000;
  const dataset_build_result r = build_sft_dataset(items, nullptr, {}, o);
  ASSERT_EQ(r.samples.size(), items.size());
  EXPECT_EQ(r.too_large, 0);
  int by_generator = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const sft_sample& s = r.samples[i];
    const csr_matrix m = items[i].load();
    ASSERT_TRUE(s.generator) << s.name;
    EXPECT_EQ(s.by_generator(), m.nnz() > o.max_nnz) << s.name;
    by_generator += s.by_generator();
    EXPECT_EQ(s.nnz(), m.nnz());
    EXPECT_EQ(to_matrix(s).col_idx, m.col_idx) << s.name;
  }
  EXPECT_GT(by_generator, 0);
  EXPECT_LT(by_generator, 6);
  EXPECT_THROW(generated_matrices(3, 1, 100, {"knn"}, 200), error);  // max below min
}

TEST(dataset_build, bad_inputs_are_errors_naming_them) {
  testing::scratch_dir dir;
  EXPECT_THROW(matrix_files(dir / "missing"), error);
  EXPECT_THROW(matrix_files(dir.path().string()), error);  // no .mtx in it
  testing::write_text(dir / "broken.mtx",
                      "%%MatrixMarket matrix coordinate real general\n2 2 1\n9 9 1\n");
  dataset_build_options o = quiet_options();
  o.label = labeller::heuristic;
  o.verify = false;
  try {
    build_sft_dataset(matrix_files(dir.path().string()), nullptr, {}, o);
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("broken.mtx:3"));
  }
  o.val_fraction = 1.5;
  EXPECT_THROW(build_sft_dataset({}, nullptr, {}, o), error);
  o.val_fraction = 0.1;
  o.label = labeller::autotune;
  EXPECT_THROW(build_sft_dataset({}, nullptr, {}, o), error);  // tuning needs a runner
}

}  // namespace
}  // namespace sparserl::train
