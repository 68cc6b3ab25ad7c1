#!/usr/bin/env python3
"""Checks that transformers and PEFT read what sparserl's save_hf_model / save_peft_adapter write.

Loads SAVED_DIR with transformers.AutoModelForCausalLM (fp32, eager attention) and compares its
logits on the reference ids with the reference logits. REFERENCE is a safetensors file holding
"ids" [batch, t] (int64) and "logits" [batch, t, vocab] (fp32): the one test_hf_save's export test
writes, or a fixture's expected.safetensors for a model saved without LoRA. With --peft-base and
--adapter, it also loads the base with the adapter through peft.PeftModel and compares that too.

    SPARSERL_HF_SAVE_DIR=/tmp/hfs build/tests/model/model_test_hf_save --gtest_filter='*export*'
    D=/tmp/hfs/qwen3_gqa   # and /tmp/hfs/qwen3_tied
    python3 tools/check_hf_save.py $D/merged $D/reference.safetensors \\
        --peft-base $D/base --adapter $D/adapter
    python3 tools/check_hf_save.py $D/plain tests/model/fixtures/qwen3_gqa/expected.safetensors

Needs torch, transformers and safetensors (and peft for --adapter). Exits 1 when a max relative
logit error (max |ours - theirs| / max |ours|) is above --tolerance.
"""
import argparse
import sys

import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM


def max_rel_error(theirs, ours):
    return ((theirs - ours).abs().max() / ours.abs().max()).item()


def logits_of(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits.float()


def load(path):
    return AutoModelForCausalLM.from_pretrained(
        path, dtype=torch.float32, attn_implementation="eager").eval()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("saved_dir", help="a directory written by save_hf_model")
    parser.add_argument("reference", help="safetensors with ids and sparserl's logits")
    parser.add_argument("--peft-base", help="the base model directory for --adapter")
    parser.add_argument("--adapter", help="a directory written by save_peft_adapter")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    if bool(args.peft_base) != bool(args.adapter):
        parser.error("--peft-base and --adapter go together")

    ref = load_file(args.reference)
    ids, ours = ref["ids"].to(torch.int64), ref["logits"].float()
    checks = {"transformers": logits_of(load(args.saved_dir), ids)}
    if args.adapter:
        from peft import PeftModel
        peft_model = PeftModel.from_pretrained(load(args.peft_base), args.adapter).eval()
        checks["peft"] = logits_of(peft_model, ids)
        checks["peft merged"] = logits_of(peft_model.merge_and_unload(), ids)

    ok = True
    for name, theirs in checks.items():
        if theirs.shape != ours.shape:
            print(f"{name}: logits shape {tuple(theirs.shape)}, reference {tuple(ours.shape)}")
            ok = False
            continue
        rel = max_rel_error(theirs, ours)
        passed = rel <= args.tolerance
        ok = ok and passed
        print(f"{name}: max relative logit error {rel:.3g} "
              f"({'ok' if passed else 'FAIL'}, tolerance {args.tolerance:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
