#pragma once
// Labels' program texts brought up to date with the expert library. A label stores the text of
// the program it names (its "// expert:" line); when a template's text changes (the BSR template
// got one text for every block shape on 2026-12-05), labels written before keep the old text and
// SFT would teach both. refresh_label_code re-emits each such program from today's library: the
// configuration is looked up by its description in the space the library offers for the sample's
// matrix (and the heuristic's pick). Labels whose configuration today's space no longer offers,
// and samples without an expert line, are left as they are. No kernel runs: the program is the
// same (same template and parameters), only its text follows the library.
#include <cstdint>
#include <string>
#include <vector>

#include "train/sft_data.h"

namespace sparserl::train {

struct refresh_result {
  int64_t refreshed = 0;  // text replaced by today's (it differed)
  int64_t unchanged = 0;  // today's text is the stored one
  int64_t not_found = 0;  // an expert line today's space does not offer: left as it was
  int64_t no_expert = 0;  // no expert line (not written by the library)
};

refresh_result refresh_label_code(std::vector<sft_sample>& samples, int threads);

}  // namespace sparserl::train
