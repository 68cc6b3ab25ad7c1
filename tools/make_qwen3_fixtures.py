#!/usr/bin/env python3
"""Builds the tiny random Qwen3 checkpoints and HF reference logits for tests/model/test_qwen3.cpp.

Each fixture is a transformers Qwen3ForCausalLM with random weights, rounded to the half type it is
stored in (so the fp32 reference and the C++ loader see exactly the same numbers), saved with
save_pretrained, plus expected.safetensors holding the inputs and transformers' fp32 logits:
  ids [2,7] -> logits [2,7,V]; padded ids + mask + positions [2,7] -> padded_logits [2,7,V]
  (left padding, positions as generate() computes them); prefix [2,3,H] + ids -> prefix_logits
  (qwen3_gqa only).
Usage: python3 tools/make_qwen3_fixtures.py [out_dir]   (default tests/model/fixtures)
"""
import json
import os
import sys

import torch
from safetensors.torch import save_file
from transformers import Qwen3Config, Qwen3ForCausalLM

FIXTURES = {
    # GQA, untied lm_head, stored as BF16, config rewritten to the top-level rope_theta form.
    "qwen3_gqa": dict(
        config=dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                    tie_word_embeddings=False, rms_norm_eps=1e-6,
                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0}),
        dtype=torch.bfloat16, rope_form="rope_theta", seed=1, prefix=True),
    # Tied embeddings, MHA (3 heads), head_dim 32 != hidden / heads, stored as F16, rope_parameters
    # form (what transformers 5 writes). Dims are small to keep all fixtures under 400 KB.
    "qwen3_tied": dict(
        config=dict(vocab_size=128, hidden_size=64, intermediate_size=24, num_hidden_layers=3,
                    num_attention_heads=3, num_key_value_heads=3, head_dim=32,
                    tie_word_embeddings=True, rms_norm_eps=1e-5,
                    rope_parameters={"rope_type": "default", "rope_theta": 1000.0}),
        dtype=torch.float16, rope_form="rope_parameters", seed=2, prefix=False),
}


def randomize(model, dtype, seed):
    # Default init (std 0.02, norms = 1) gives near-uniform attention and leaves the norms untested.
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                v = 1.0 + 0.3 * torch.randn(p.shape, generator=gen)
            else:
                v = 0.15 * torch.randn(p.shape, generator=gen)
            p.copy_(v.to(dtype).to(torch.float32))


def rewrite_rope(path, form):
    with open(path) as f:
        cfg = json.load(f)
    if form == "rope_theta":  # the transformers 4.x spelling
        params = cfg.pop("rope_parameters")
        cfg["rope_theta"] = params["rope_theta"]
        cfg["rope_scaling"] = None
    else:
        assert "rope_parameters" in cfg, "transformers no longer writes rope_parameters"
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def reference(model, cfg, with_prefix):
    gen = torch.Generator().manual_seed(7)
    v, h = cfg["vocab_size"], cfg["hidden_size"]
    ids = torch.randint(0, v, (2, 7), generator=gen)
    padded = torch.randint(1, v, (2, 7), generator=gen)
    mask = torch.ones(2, 7, dtype=torch.int64)
    mask[1, :3] = 0
    padded[1, :3] = 0
    positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
    prefix = torch.randn(2, 3, h, generator=gen)
    with torch.no_grad():
        logits = model(input_ids=ids).logits
        padded_logits = model(input_ids=padded, attention_mask=mask, position_ids=positions).logits
        embeds = torch.cat([prefix, model.get_input_embeddings()(ids)], dim=1)
        prefix_logits = model(inputs_embeds=embeds).logits
    out = {
        "ids": ids, "logits": logits.float(),
        "padded_ids": padded, "padded_mask": mask, "padded_positions": positions,
        "padded_logits": padded_logits.float(),
    }
    if with_prefix:  # one fixture is enough, and the size budget is tight
        out.update({"prefix": prefix, "prefix_logits": prefix_logits.float()})
    return out


def build(out_dir, name, spec):
    torch.manual_seed(spec["seed"])
    config = Qwen3Config(**spec["config"], attn_implementation="eager")
    model = Qwen3ForCausalLM(config).eval()
    randomize(model, spec["dtype"], spec["seed"])
    path = os.path.join(out_dir, name)
    os.makedirs(path, exist_ok=True)
    model.to(spec["dtype"]).save_pretrained(path, safe_serialization=True)
    rewrite_rope(os.path.join(path, "config.json"), spec["rope_form"])
    # The reference comes from the saved files, so it proves transformers accepts the rewritten config.
    reloaded = Qwen3ForCausalLM.from_pretrained(path, dtype=torch.float32,
                                                attn_implementation="eager").eval()
    assert reloaded.config.tie_word_embeddings == spec["config"]["tie_word_embeddings"]
    theta = reloaded.config.rope_parameters["rope_theta"]
    assert theta == spec["config"]["rope_parameters"]["rope_theta"], theta
    tensors = {k: t.contiguous() for k, t in reference(reloaded, spec["config"], spec["prefix"]).items()}
    save_file(tensors, os.path.join(path, "expected.safetensors"))
    gen_cfg = os.path.join(path, "generation_config.json")
    if os.path.exists(gen_cfg):
        os.remove(gen_cfg)  # not needed by the tests
    print(name, "max |logit|", tensors["logits"].abs().max().item())


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "model", "fixtures")
    for name, spec in FIXTURES.items():
        build(out_dir, name, spec)


if __name__ == "__main__":
    main()
