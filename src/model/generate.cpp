#include "model/generate.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <string>

#include "sparse/error.h"

namespace sparserl {

namespace {

struct batch_inputs {
  torch::Tensor ids;     // [batch, longest] left-padded, or [batch, 0] when embeds carry all
  torch::Tensor embeds;  // [batch, longest + p, hidden] when a prefix is given
  torch::Tensor mask;    // [batch, width] 1 for real positions (prefix included)
};

void check_inputs(const qwen3_model& model, const std::vector<std::vector<int32_t>>& prompts,
                  const generate_options& options) {
  if (prompts.empty()) throw error("generate: the batch has no prompts");
  if (options.max_new_tokens < 0)
    throw error("generate: max_new_tokens " + std::to_string(options.max_new_tokens) +
                " must be >= 0");
  if (!options.stop_strings.empty() && !options.decode)
    throw error("generate: stop_strings need a decode function to read the text");
  validate(options.sampling);
  const int64_t vocab = model.config().vocab_size;
  if (options.pad_token_id < 0 || options.pad_token_id >= vocab)
    throw error("generate: pad_token_id " + std::to_string(options.pad_token_id) +
                " is outside the vocabulary of " + std::to_string(vocab));
  const torch::Tensor& p = options.prefix_embeds;
  if (p.defined() && (p.dim() != 3 || p.size(0) != static_cast<int64_t>(prompts.size()) ||
                      p.size(2) != model.config().hidden_size))
    throw error("generate: prefix_embeds must be [" + std::to_string(prompts.size()) + ", p, " +
                std::to_string(model.config().hidden_size) + "]");
  const bool has_prefix = p.defined() && p.size(1) > 0;
  for (size_t i = 0; i < prompts.size(); ++i)
    if (prompts[i].empty() && !has_prefix)
      throw error("generate: prompt " + std::to_string(i) + " is empty and there is no prefix");
}

// Left padding keeps every sequence's last real token in the last column, so one slice of the
// logits gives each sequence's next-token distribution. A prefix sits between padding and prompt.
batch_inputs pad_left(const qwen3_model& model, const std::vector<std::vector<int32_t>>& prompts,
                      const generate_options& options, torch::Device device) {
  size_t longest = 0;
  for (const auto& p : prompts) longest = std::max(longest, p.size());
  const int64_t batch = static_cast<int64_t>(prompts.size());
  const int64_t width = static_cast<int64_t>(longest);
  torch::Tensor ids = torch::full({batch, width}, options.pad_token_id, torch::kInt64);
  torch::Tensor mask = torch::zeros({batch, width}, torch::kInt64);
  for (int64_t i = 0; i < batch; ++i) {
    const auto& p = prompts[i];
    const int64_t n = static_cast<int64_t>(p.size()), start = width - n;
    if (n == 0) continue;
    ids[i].narrow(0, start, n).copy_(torch::tensor(std::vector<int64_t>(p.begin(), p.end())));
    mask[i].narrow(0, start, n).fill_(1);
  }
  ids = ids.to(device);
  mask = mask.to(device);
  const torch::Tensor& prefix = options.prefix_embeds;
  if (!prefix.defined() || prefix.size(1) == 0) return {ids, {}, mask};
  // Rows of [padding, prefix, prompt] embeddings, fed as one prefix with no token ids.
  const torch::Tensor tokens = model.embed(ids);
  const torch::Tensor pre = prefix.to(device, tokens.scalar_type());
  std::vector<torch::Tensor> rows, mask_rows;
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t start = width - static_cast<int64_t>(prompts[i].size());
    rows.push_back(torch::cat(
        {tokens[i].narrow(0, 0, start), pre[i], tokens[i].narrow(0, start, width - start)}));
    mask_rows.push_back(
        torch::cat({mask[i].narrow(0, 0, start), torch::ones({pre.size(1)}, mask.options()),
                    mask[i].narrow(0, start, width - start)}));
  }
  return {ids.narrow(1, 0, 0), torch::stack(rows), torch::stack(mask_rows)};
}

bool has_stop_string(const std::string& text, const std::vector<std::string>& stops) {
  return std::any_of(stops.begin(), stops.end(), [&](const std::string& s) {
    return !s.empty() && text.find(s) != std::string::npos;
  });
}

// Host bookkeeping of one step: appends each live sequence's token and decides whether it ended.
// Returns the sequences that ended on a stop string (the device does not know those yet).
std::vector<int64_t> record_step(const torch::Tensor& host_tokens, int64_t step,
                                 const generate_options& options, std::vector<generation>& out,
                                 std::vector<bool>& done) {
  std::vector<int64_t> stopped;
  const auto tokens = host_tokens.accessor<int64_t, 1>();
  for (size_t i = 0; i < out.size(); ++i) {
    if (done[i]) continue;
    const int32_t token = static_cast<int32_t>(tokens[i]);
    out[i].ids.push_back(token);
    if (options.eos_token_ids.count(token) != 0) {
      out[i].finish_reason = "eos";
    } else if (!options.stop_strings.empty() &&
               has_stop_string(options.decode(out[i].ids), options.stop_strings)) {
      out[i].finish_reason = "stop";
      stopped.push_back(static_cast<int64_t>(i));
    } else if (step + 1 == options.max_new_tokens) {
      out[i].finish_reason = "length";
    } else {
      continue;
    }
    done[i] = true;
  }
  return stopped;
}

// Prefills the padded batch once, then feeds one token per step through the KV cache.
void decode_batch(const qwen3_model& model, const std::vector<std::vector<int32_t>>& prompts,
                  const generate_options& options, std::vector<generation>& out) {
  const torch::Device device = model.weights().embed_tokens.device();
  const int64_t batch = static_cast<int64_t>(prompts.size());
  std::vector<bool> done(prompts.size(), false);
  const batch_inputs in = pad_left(model, prompts, options, device);
  qwen3_kv_cache cache;
  cache.reserve(in.mask.size(1) + options.max_new_tokens);  // every position the loop can reach
  qwen3_forward_options fw;
  fw.prefix_embeds = in.embeds;
  fw.attention_mask = in.mask;
  fw.cache = &cache;
  torch::Tensor logits = model.forward(in.ids, fw).select(1, -1);
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(device);
  const torch::Tensor eos = torch::tensor(std::vector<int64_t>(options.eos_token_ids.begin(),
                                                               options.eos_token_ids.end()),
                                          torch::kInt64)
                                .to(device);
  const torch::Tensor pad = torch::full({batch}, options.pad_token_id, i64);
  torch::Tensor finished = torch::zeros({batch}, i64.dtype(torch::kBool));
  token_sampler sampler(options.sampling, device);
  // With one new token there is no decode step: the fixed and graph modes' set-up would not pay.
  const decode_mode mode =
      options.max_new_tokens > 1 ? resolve_decode_mode(options.mode, device) : decode_mode::growing;
  const std::unique_ptr<decode_stepper> stepper = make_decode_stepper(mode, model, cache, in.mask);
  for (int64_t step = 0; step < options.max_new_tokens; ++step) {
    const torch::Tensor token = torch::where(finished, pad, sampler.next(logits));
    if (eos.numel() > 0)
      finished = finished.logical_or((token.unsqueeze(1) == eos.unsqueeze(0)).any(1));
    // The one host sync of the step.
    const torch::Tensor host = token.to(torch::kCPU);
    for (int64_t i : record_step(host, step, options, out, done)) finished[i].fill_(true);
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; })) break;
    // Finished sequences still take a (pad) token so the batch stays rectangular.
    logits = stepper->step(token);
  }
}

}  // namespace

std::vector<generation> generate(const qwen3_model& model,
                                 const std::vector<std::vector<int32_t>>& prompts,
                                 const generate_options& options) {
  torch::NoGradGuard no_grad;
  check_inputs(model, prompts, options);
  std::vector<generation> out(prompts.size());
  if (options.max_new_tokens == 0) {
    for (generation& g : out) g.finish_reason = "length";
  } else {
    decode_batch(model, prompts, options, out);
  }
  if (options.decode)
    for (generation& g : out) g.text = options.decode(g.ids);
  return out;
}

}  // namespace sparserl
