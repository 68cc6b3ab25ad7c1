#pragma once
// The reference policy PPO's KL penalty measures against: the starting (SFT) weights. With LoRA
// it is the model itself with the adapters off (null here); when every weight trains it is a
// frozen copy, taken before a resume restores later weights.
#include <memory>

#include "model/qwen3.h"

namespace sparserl::train {

// A frozen copy of `model`'s weights when it has no LoRA adapters, else null.
std::unique_ptr<qwen3_model> make_reference_model(const qwen3_model& model);

}  // namespace sparserl::train
