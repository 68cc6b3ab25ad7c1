#include "train/program_sampler.h"

#include <torch/types.h>
#include <torch/utils.h>

#include "sparse/features.h"

namespace sparserl::train {

matrix_input read_matrix(const policy& p, const csr_matrix& matrix) {
  const matrix_features features = compute_features(matrix);
  return {p.encode(matrix, features), prompt_matrix_of(matrix, features)};
}

sampled_programs sample_programs(const policy& p, const std::vector<program_request>& requests,
                                 int64_t max_new_tokens, const sampling_options& sampling) {
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
  out.generations = generate(p.model(), out.prompts, g);
  for (generation& gen : out.generations) gen.text = strip_program_end(gen.text);
  return out;
}

}  // namespace sparserl::train
