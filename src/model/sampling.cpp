#include "model/sampling.h"

#include <ATen/Context.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <limits>
#include <string>

#include "sparse/error.h"

namespace sparserl {

namespace {

constexpr float minus_inf = -std::numeric_limits<float>::infinity();

void check_logits(const torch::Tensor& logits, const char* where) {
  if (logits.dim() != 2 || logits.size(1) == 0)
    throw error(std::string(where) + ": logits must be [batch, vocab] with vocab > 0, got " +
                std::to_string(logits.dim()) + " dims");
  if (logits.scalar_type() != torch::kFloat32)
    throw error(std::string(where) + ": logits must be fp32");
}

torch::Tensor top_k_mask(const torch::Tensor& logits, int top_k) {
  const int64_t k = std::min<int64_t>(top_k, logits.size(1));
  // Ties with the k-th value stay, as transformers' TopKLogitsWarper keeps them.
  const torch::Tensor kth = std::get<0>(logits.topk(k, 1)).narrow(1, k - 1, 1);
  return logits < kth;
}

torch::Tensor top_p_mask(const torch::Tensor& logits, double top_p) {
  const auto [sorted, order] = logits.sort(1, /*descending=*/true);
  const torch::Tensor probs = torch::softmax(sorted, 1);
  // Mass of the strictly more likely tokens: the first token always has 0 and so stays.
  const torch::Tensor before = probs.cumsum(1) - probs;
  torch::Tensor drop_sorted = before >= top_p;
  drop_sorted.select(1, 0).fill_(false);  // guard against rounding: keep at least one
  return torch::zeros_like(drop_sorted).scatter(1, order, drop_sorted);
}

}  // namespace

void validate(const sampling_options& options) {
  if (!(options.temperature >= 0.0))
    throw error("sampling_options: temperature " + std::to_string(options.temperature) +
                " must be >= 0");
  if (options.top_k < 0)
    throw error("sampling_options: top_k " + std::to_string(options.top_k) + " must be >= 0");
  if (!(options.top_p > 0.0 && options.top_p <= 1.0))
    throw error("sampling_options: top_p " + std::to_string(options.top_p) + " must be in (0, 1]");
}

torch::Tensor filter_logits(const torch::Tensor& logits, int top_k, double top_p) {
  check_logits(logits, "filter_logits");
  validate(sampling_options{1.0, top_k, top_p, 0});
  torch::Tensor out = logits;
  if (top_k > 0) out = out.masked_fill(top_k_mask(out, top_k), minus_inf);
  if (top_p < 1.0) out = out.masked_fill(top_p_mask(out, top_p), minus_inf);
  return out;
}

token_sampler::token_sampler(const sampling_options& options, torch::Device device)
    : options_(options),
      device_(device),
      // A private clone of the device's default generator: seeding it leaves the global one alone.
      generator_(at::globalContext().defaultGenerator(device).clone()) {
  validate(options_);
  std::lock_guard<std::mutex> lock(generator_.mutex());
  generator_.set_current_seed(options_.seed);
}

torch::Tensor token_sampler::next(const torch::Tensor& logits) {
  torch::NoGradGuard no_grad;
  check_logits(logits, "token_sampler::next");
  if (logits.device() != device_)
    throw error("token_sampler::next: logits are on " + logits.device().str() +
                ", the sampler on " + device_.str());
  if (options_.temperature == 0.0) return logits.argmax(1);
  const torch::Tensor scaled =
      filter_logits(logits / options_.temperature, options_.top_k, options_.top_p);
  const torch::Tensor probs = torch::softmax(scaled, 1);
  return torch::multinomial(probs, 1, /*replacement=*/false, generator_).squeeze(1);
}

}  // namespace sparserl
