#include "train/program_sampler.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>

#include "sparse/features.h"

namespace sparserl::train {
namespace {

// The source after each header of `headers` (phase one's generations, which ended on the header's
// end), sampled with `g.sampling`: prompt + header in, the header's ids first in each result.
void continue_after_headers(const policy& p, const std::vector<std::vector<int32_t>>& prompts,
                            const torch::Tensor& prefix, int64_t max_new_tokens, generate_options g,
                            std::vector<generation>& headers) {
  std::vector<int64_t> rows;
  std::vector<std::vector<int32_t>> continued;
  size_t shortest_header = 0;  // of the rows that go on: the batch's budget is set by it
  for (size_t i = 0; i < headers.size(); ++i) {
    generation& h = headers[i];
    if (h.finish_reason != "stop") continue;  // ended by EOS or the length: as it is
    if (static_cast<int64_t>(h.ids.size()) >= max_new_tokens) {  // no budget left for a source
      h.finish_reason = "length";
      continue;
    }
    if (rows.empty() || h.ids.size() < shortest_header) shortest_header = h.ids.size();
    rows.push_back(static_cast<int64_t>(i));
    std::vector<int32_t> ids = prompts[i];
    ids.insert(ids.end(), h.ids.begin(), h.ids.end());
    continued.push_back(std::move(ids));
  }
  if (rows.empty()) return;
  // One budget for the batch, that of the shortest header; each row is cut to its own below.
  g.max_new_tokens = max_new_tokens - static_cast<int64_t>(shortest_header);
  g.stop_strings.clear();
  g.prefix_embeds = prefix.index_select(0, torch::tensor(rows, torch::kInt64).to(prefix.device()));
  const std::vector<generation> sources = generate(p.model(), continued, g);
  for (size_t j = 0; j < rows.size(); ++j) {
    generation& h = headers[static_cast<size_t>(rows[j])];
    const size_t budget = static_cast<size_t>(max_new_tokens) - h.ids.size();
    const std::vector<int32_t>& more = sources[j].ids;
    const bool cut = more.size() > budget;
    h.ids.insert(h.ids.end(), more.begin(),
                 more.begin() + static_cast<std::ptrdiff_t>(std::min(budget, more.size())));
    h.finish_reason = cut ? "length" : sources[j].finish_reason;
  }
}

}  // namespace

matrix_input read_matrix(const policy& p, const csr_matrix& matrix) {
  const matrix_features features = compute_features(matrix);
  return {p.encode(matrix, features), prompt_matrix_of(matrix, features)};
}

sampled_programs sample_programs(const policy& p, const std::vector<program_request>& requests,
                                 int64_t max_new_tokens, const sampling_options& sampling,
                                 const std::optional<sampling_options>& header) {
  sampled_programs out;
  std::vector<const matrix_encoding*> encodings;
  for (const program_request& r : requests) {
    encodings.push_back(&r.input->encoding);
    out.prompts.push_back(p.encode_text(task_prompt(r.op, r.k, r.input->facts)));
  }
  torch::NoGradGuard no_grad;
  out.prefix = p.prefix(encodings);
  generate_options g;
  g.max_new_tokens = max_new_tokens;
  g.eos_token_ids = {p.eos_id()};
  if (auto end = p.tokenizer().token_to_id(program_end)) g.eos_token_ids.insert(*end);
  g.decode = tokenizer_decoder(p.tokenizer());
  g.sampling = sampling;
  g.prefix_embeds = out.prefix;
  g.pad_token_id = p.pad_id();
  if (header) {
    generate_options h = g;
    h.sampling = *header;
    h.stop_strings = {program_header_end};
    out.generations = generate(p.model(), out.prompts, h);
    continue_after_headers(p, out.prompts, out.prefix, max_new_tokens, g, out.generations);
    for (generation& gen : out.generations) gen.text = g.decode(gen.ids);
  } else {
    out.generations = generate(p.model(), out.prompts, g);
  }
  for (generation& gen : out.generations) gen.text = strip_program_end(gen.text);
  return out;
}

}  // namespace sparserl::train
