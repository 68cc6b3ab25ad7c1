// libFuzzer target: parse_completion (kernel/completion.h), raw model output -> kernel_program.
// The last input byte picks the op. It must never throw; a failure must say why; a program must
// have one launch per entry point and a source, and its canonical text (to_text) must parse back
// to the same program, with the same identity (kernel/program_identity.h) as the completion it
// came from. The same invariants as tests/kernel/test_completion.cpp's random
// mutations, under coverage guidance and the sanitizers.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernel/abi.h"
#include "kernel/completion.h"
#include "kernel/program.h"
#include "kernel/program_identity.h"

namespace {

using namespace sparserl;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_completion: %s\n", what.c_str());
  std::abort();
}

bool same_launch(const launch_spec& a, const launch_spec& b) {
  return a.entry == b.entry && a.block == b.block && a.rows_per_block == b.rows_per_block &&
         a.nnz_per_block == b.nnz_per_block && a.grid == b.grid && a.k_per_block == b.k_per_block &&
         a.shared_bytes == b.shared_bytes;
}

bool same_program(const kernel_program& a, const kernel_program& b) {
  if (a.format != b.format || a.format_params != b.format_params || a.source != b.source ||
      a.launches.size() != b.launches.size())
    return false;
  for (size_t i = 0; i < a.launches.size(); ++i)
    if (!same_launch(a.launches[i], b.launches[i])) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const sparse_op op = (data[size - 1] & 1) ? sparse_op::spmm : sparse_op::spmv;
  const std::string text(reinterpret_cast<const char*>(data), size - 1);
  parse_result r;
  try {
    r = parse_completion(text, op);
  } catch (const std::exception& e) {
    finding(std::string("parse_completion threw: ") + e.what());
  }
  if (!r.program) {
    if (r.error.empty()) finding("no program and no reason");
    return 0;
  }
  const kernel_program& p = *r.program;
  if (p.launches.size() != entry_points(op, p.format).size())
    finding("launch count differs from the format's entry points");
  if (p.source.empty()) finding("program without source");
  const parse_result again = parse_completion(p.to_text(), op);
  if (!again.program) finding("to_text does not parse back: " + again.error);
  if (!same_program(p, *again.program)) finding("to_text parses back to a different program");
  std::string identity;
  try {
    identity = program_identity(text, op);
  } catch (const std::exception& e) {
    finding(std::string("program_identity threw: ") + e.what());
  }
  if (identity != program_identity(p.to_text(), op))
    finding("the program's canonical text has another identity than the completion");
  return 0;
}
