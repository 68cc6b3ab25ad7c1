// The matrix cache (hits, LRU eviction by bytes, entries outliving eviction) and the registered
// set's directory listing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "serve/matrix_cache.h"
#include "serve/registered_matrices.h"
#include "sparse/error.h"
#include "sparse/generators.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;

cached_matrix grid(int32_t rows, const std::string& id) {
  generator_spec spec;
  spec.family = "stencil2d";
  spec.rows = rows;
  return make_cached(generate_matrix(spec), id);
}

TEST(matrix_cache, a_second_request_is_a_hit_without_a_build) {
  matrix_cache cache;
  int builds = 0;
  auto build = [&] {
    ++builds;
    return grid(64, "a");
  };
  const auto first = cache.get_or_build("a", build);
  const auto second = cache.get_or_build("a", build);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(first.get(), second.get());
  const matrix_cache_stats s = cache.stats();
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.entries, 1);
  EXPECT_EQ(s.bytes, first->bytes);
}

TEST(matrix_cache, least_recently_used_goes_first_and_lives_while_held) {
  const int64_t one = grid(64, "x").bytes;
  matrix_cache cache(2 * one);
  const auto a = cache.get_or_build("a", [] { return grid(64, "a"); });
  cache.get_or_build("b", [] { return grid(64, "b"); });
  cache.get_or_build("a", [] { return grid(64, "a"); });  // a is now the most recent
  cache.get_or_build("c", [] { return grid(64, "c"); });  // over budget: b goes
  EXPECT_EQ(cache.stats().entries, 2);
  int rebuilt = 0;
  cache.get_or_build("a", [&] { return ++rebuilt, grid(64, "a"); });
  EXPECT_EQ(rebuilt, 0);
  cache.get_or_build("b", [&] { return ++rebuilt, grid(64, "b"); });
  EXPECT_EQ(rebuilt, 1);
  EXPECT_EQ(a->csr.rows, 64);  // still valid, whatever was evicted
}

TEST(matrix_cache, a_failed_build_caches_nothing) {
  matrix_cache cache;
  EXPECT_THROW(cache.get_or_build("bad", []() -> cached_matrix { throw error("broken"); }), error);
  EXPECT_EQ(cache.stats().entries, 0);
}

TEST(matrix_cache, content_ids_differ_with_the_content) {
  const cached_matrix a = grid(64, ""), b = grid(81, "");
  EXPECT_EQ(csr_content_id(a.csr), csr_content_id(grid(64, "").csr));
  EXPECT_NE(csr_content_id(a.csr), csr_content_id(b.csr));
}

class registered_set : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sparserl-registered-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void touch(const std::string& name) { std::ofstream(dir_ / name) << "x"; }
  fs::path dir_;
};

TEST_F(registered_set, names_are_file_stems_of_mtx_files) {
  touch("cant.mtx");
  touch("road.mtx.gz");
  touch("notes.txt");
  fs::create_directory(dir_ / "sub.mtx");
  const registered_matrices set(dir_.string());
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(set.path_of("cant"), (dir_ / "cant.mtx").string());
  EXPECT_EQ(set.path_of("road"), (dir_ / "road.mtx.gz").string());
  EXPECT_FALSE(set.path_of("notes").has_value());
  EXPECT_FALSE(set.path_of("sub").has_value());
}

TEST_F(registered_set, a_name_given_twice_or_a_missing_dir_is_an_error) {
  touch("a.mtx");
  touch("a.mtx.gz");
  EXPECT_THROW(registered_matrices(dir_.string()), error);
  try {
    registered_matrices((dir_ / "none").string());
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("cannot list"));
  }
}

}  // namespace
}  // namespace sparserl
