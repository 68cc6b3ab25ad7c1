#include "sparse/generators.h"

#include <cstdio>
#include <string>

#include "sparse/generators_detail.h"

namespace sparserl {

namespace {

struct family_entry {
  const char* name;
  csr_matrix (*generate)(const generator_spec&);
};

constexpr family_entry families[] = {
    {"stencil2d", gen::generate_stencil2d},
    {"stencil3d", gen::generate_stencil3d},
    {"banded", gen::generate_banded},
    {"block_diagonal", gen::generate_block_diagonal},
    {"fem", gen::generate_fem},
    {"random", gen::generate_random},
    {"rmat", gen::generate_rmat},
    {"circuit", gen::generate_circuit},
    {"lp", gen::generate_lp},
};

std::string family_list() {
  std::string list;
  for (const family_entry& f : families) list += (list.empty() ? "" : ", ") + std::string(f.name);
  return list;
}

}  // namespace

std::vector<std::string> generator_families() {
  std::vector<std::string> names;
  for (const family_entry& f : families) names.emplace_back(f.name);
  return names;
}

csr_matrix generate_matrix(const generator_spec& spec) {
  for (const family_entry& f : families) {
    if (spec.family != f.name) continue;
    if (spec.rows < 1) gen::fail(spec, "rows must be >= 1, got " + std::to_string(spec.rows));
    if (spec.cols < 0)
      gen::fail(spec, "cols must be >= 0 (0 = square), got " + std::to_string(spec.cols));
    return f.generate(spec);
  }
  throw error("unknown generator family '" + spec.family + "': expected one of " + family_list());
}

namespace gen {

void fail(const generator_spec& spec, const std::string& why) {
  throw error("generator '" + spec.family + "': " + why);
}

void require_square(const generator_spec& spec) {
  if (spec.cols != 0 && spec.cols != spec.rows)
    fail(spec, "makes square matrices only: cols must be 0 or equal rows (" +
                   std::to_string(spec.rows) + "), got " + std::to_string(spec.cols));
}

void check_nnz_estimate(const std::string& family, double estimated_nnz) {
  if (!(estimated_nnz <= static_cast<double>(INT32_MAX))) {
    char amount[32];
    std::snprintf(amount, sizeof amount, "%.3g", estimated_nnz);
    throw error("generator '" + family + "': parameters ask for about " + amount +
                " nonzeros, more than the 32-bit ABI's 2^31-1");
  }
}

}  // namespace gen

}  // namespace sparserl
