#pragma once
// Turning text into training sequences: SFT examples (prompt unscored, the program and its end
// token scored; the matrix's encoding as prefix) and pre-training blocks (documents joined by EOS
// and cut into fixed-length blocks, every token scored).
#include <string>
#include <vector>

#include "kernel/program.h"
#include "sparse/csr_matrix.h"
#include "train/lm_batch.h"
#include "train/policy.h"

namespace sparserl::train {

// The prompt (train/prompt.h) then the program, the loss on the program and its end only.
lm_example make_sft_example(const policy& p, const std::string& prompt, const std::string& code,
                            int64_t prefix_index);

// Blocks of block_len tokens (the last partial block is kept when it has >= 2 tokens).
std::vector<lm_example> make_pretrain_blocks(const policy& p, const std::vector<std::string>& docs,
                                             int64_t block_len);

}  // namespace sparserl::train
