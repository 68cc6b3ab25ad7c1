#include "train/lm_examples.h"

#include "train/prompt.h"

namespace sparserl::train {

lm_example make_sft_example(const policy& p, const std::string& prompt, const std::string& code,
                            int64_t prefix_index) {
  lm_example e;
  e.prefix_index = prefix_index;
  e.ids = p.encode_text(prompt);
  e.loss_mask.assign(e.ids.size(), 0);
  std::vector<int32_t> answer = p.encode_text(code + program_end);
  answer.push_back(p.eos_id());
  e.ids.insert(e.ids.end(), answer.begin(), answer.end());
  e.loss_mask.resize(e.ids.size(), 1);
  return e;
}

std::vector<lm_example> make_pretrain_blocks(const policy& p, const std::vector<std::string>& docs,
                                             int64_t block_len) {
  std::vector<int32_t> stream;
  for (const std::string& d : docs) {
    std::vector<int32_t> ids = p.encode_text(d);
    stream.insert(stream.end(), ids.begin(), ids.end());
    stream.push_back(p.eos_id());
  }
  std::vector<lm_example> out;
  for (size_t start = 0; start + 2 <= stream.size(); start += static_cast<size_t>(block_len)) {
    const size_t end = std::min(stream.size(), start + static_cast<size_t>(block_len));
    lm_example e;
    e.ids.assign(stream.begin() + static_cast<std::ptrdiff_t>(start),
                 stream.begin() + static_cast<std::ptrdiff_t>(end));
    if (e.ids.size() >= 2) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace sparserl::train
