#pragma once
// Next-token choice for a batch of logits: temperature, top-k and top-p (nucleus) filtering as
// transformers' generate() applies them, then a multinomial draw from a generator seeded once per
// sampler, so the same seed and logits give the same tokens.
#include <torch/types.h>

#include <cstdint>

namespace sparserl {

struct sampling_options {
  double temperature = 1.0;  // 0 = greedy (argmax); otherwise logits are divided by it
  int top_k = 0;             // keep the k most likely tokens; 0 = off
  double top_p = 1.0;        // keep the smallest prefix of likely tokens whose mass reaches p
  uint64_t seed = 0;
};

// Throws sparserl::error when an option is out of range (temperature < 0, top_k < 0, top_p
// outside (0, 1]).
void validate(const sampling_options& options);

// fp32 logits [batch, vocab] with every token outside the top-k / top-p sets of its row set to
// -inf. top_p keeps a token when the mass of the more likely tokens is below p, so the most
// likely token always stays.
torch::Tensor filter_logits(const torch::Tensor& logits, int top_k, double top_p);

// Draws next tokens for a sequence of steps from one generator, seeded at construction.
class token_sampler {
 public:
  token_sampler(const sampling_options& options, torch::Device device);

  // logits [batch, vocab] (fp32, on the sampler's device) -> int64 token ids [batch].
  torch::Tensor next(const torch::Tensor& logits);

 private:
  sampling_options options_;
  torch::Device device_;
  torch::Generator generator_;
};

}  // namespace sparserl
