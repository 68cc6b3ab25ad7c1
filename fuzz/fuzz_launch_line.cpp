// libFuzzer target: parse_launch_line (kernel/completion.h) and the geometry the harness derives
// from a launch (kernel/abi.h compute_geometry), the path of "1e9-thread" and huge-shared-memory
// launches. Input: 8 bytes picking the work sizes and k, then the line. A parsed line must hold
// exactly one work key, a block in 1..1024 and a shared size in range, and must parse back from
// its canonical text; compute_geometry must either stay within launch_limits or throw
// sparserl::error. Anything else is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernel/abi.h"
#include "kernel/completion.h"
#include "sparse/error.h"

namespace {

using namespace sparserl;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_launch_line: %s\n", what.c_str());
  std::abort();
}

// The line the way kernel_program::to_text writes one (its order of keys).
std::string canonical(const launch_spec& s) {
  std::string out = "block=" + std::to_string(s.block);
  if (s.rows_per_block > 0) out += " rows_per_block=" + std::to_string(s.rows_per_block);
  if (s.nnz_per_block > 0) out += " nnz_per_block=" + std::to_string(s.nnz_per_block);
  if (s.grid > 0) out += " grid=" + std::to_string(s.grid);
  if (s.k_per_block > 0) out += " k_per_block=" + std::to_string(s.k_per_block);
  if (s.shared_bytes > 0) out += " shared=" + std::to_string(s.shared_bytes);
  return out;
}

bool same(const launch_spec& a, const launch_spec& b) {
  return a.block == b.block && a.rows_per_block == b.rows_per_block &&
         a.nnz_per_block == b.nnz_per_block && a.grid == b.grid && a.k_per_block == b.k_per_block &&
         a.shared_bytes == b.shared_bytes;
}

void check_geometry(const launch_spec& spec, const format_arguments& args, int32_t k) {
  const launch_limits limits;
  for (bool nnz_work : {false, true}) {
    const entry_point entry{"fuzz_entry", nnz_work};
    launch_geometry g;
    try {
      g = compute_geometry(spec, entry, args, k, limits);
    } catch (const error&) {
      continue;
    } catch (const std::exception& e) {
      finding(std::string("compute_geometry threw an exception other than sparserl::error: ") +
              e.what());
    }
    const uint64_t threads = uint64_t{g.grid_x} * g.grid_y * g.grid_z * g.block_x;
    if (g.block_x < 1 || g.block_x > limits.max_threads_per_block || g.grid_x > limits.max_grid_x ||
        g.grid_y > limits.max_grid_y || threads > uint64_t(limits.max_total_threads) ||
        g.shared_bytes > limits.max_shared_bytes)
      finding("geometry beyond launch_limits for " + canonical(spec));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint32_t work = 0, k_bits = 0;
  std::memcpy(&work, data, 4);
  std::memcpy(&k_bits, data + 4, 4);
  const std::string line(reinterpret_cast<const char*>(data + 8), size - 8);
  launch_spec spec;
  std::string why;
  try {
    why = parse_launch_line(line, spec);
  } catch (const std::exception& e) {
    finding(std::string("parse_launch_line threw: ") + e.what());
  }
  if (!why.empty()) return 0;
  const int work_keys = (spec.rows_per_block > 0) + (spec.nnz_per_block > 0) + (spec.grid > 0);
  if (work_keys != 1 || spec.block < 1 || spec.block > 1024 || spec.shared_bytes < 0 ||
      spec.k_per_block < 0 || spec.rows_per_block < 0 || spec.nnz_per_block < 0 || spec.grid < 0)
    finding("parsed launch violates the grammar: " + canonical(spec));
  launch_spec again;
  if (const std::string bad = parse_launch_line(canonical(spec), again); !bad.empty())
    finding("canonical line does not parse: " + bad);
  if (!same(spec, again)) finding("canonical line parses to another launch");
  format_arguments args;
  args.work_rows = work & 0xffffff;                    // up to 16M rows
  args.work_nnz = int64_t{work >> 8} * (work & 0xff);  // up to ~4G entries
  check_geometry(spec, args, static_cast<int32_t>(k_bits & 0x7fffffff));
  return 0;
}
