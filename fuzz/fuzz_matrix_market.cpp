// libFuzzer target: the Matrix Market parser (sparse/matrix_market.h) on arbitrary bytes. It must
// either return a valid CSR matrix (finite values unless allow_nonfinite) or throw
// sparserl::error "fuzz:<line>: <why>" / "fuzz: <why>" on one line. A crash, a sanitizer report,
// another exception type or a message of another form is a finding.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <regex>
#include <string>

#include "sparse/csr_matrix.h"
#include "sparse/error.h"
#include "sparse/matrix_market.h"

namespace {

// The reader's own memory cap (mtx_read_options::max_bytes, 16 GiB by default) bounds what a
// declared size may allocate; below libFuzzer's 2 GiB malloc limit here so that a header asking
// for a huge CSR is the parser's clear error, not an out-of-memory report.
constexpr int64_t fuzz_max_bytes = int64_t{64} << 20;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_matrix_market: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparserl;
  static const std::regex message_form("fuzz(:[0-9]+)?: [^\n]+");
  mtx_read_options options;
  options.max_bytes = fuzz_max_bytes;
  options.allow_nonfinite = size > 0 && (data[size - 1] & 1);  // the last byte picks: no bias
  std::optional<csr_matrix> m;
  try {
    m = parse_matrix_market(reinterpret_cast<const char*>(data), size, "fuzz", options);
  } catch (const error& e) {
    if (!std::regex_match(e.what(), message_form)) finding(std::string("bad message: ") + e.what());
    return 0;
  } catch (const std::exception& e) {
    finding(std::string("exception other than sparserl::error: ") + e.what());
  }
  try {
    validate_csr(*m);
  } catch (const std::exception& e) {
    finding(std::string("parsed matrix is not valid CSR: ") + e.what());
  }
  if (!options.allow_nonfinite)
    for (float v : m->values)
      if (!std::isfinite(v)) finding("non-finite value accepted without allow_nonfinite");
  return 0;
}
