#!/usr/bin/env python3
"""Decode throughput: sparserl's generate() (bench/bench_decode) beside transformers' generate() on
the same random Qwen3-8B-shaped model (36 layers, hidden 4096, 32/8 heads, head_dim 128,
intermediate 12288, vocab 151936, bf16) and the same prompts, in one run on one GPU.

Writes OUT/decode.json with tokens/s per batch size for both, and the memory-bandwidth bound
(weight bytes / copy bandwidth per decode step). Also writes OUT/model (the HF directory) and
OUT/model/expected.safetensors (ids + transformers' bf16 logits) for tests/model/test_qwen3_live.

usage: python3 tools/decode_bench.py OUT BENCH_DECODE_BINARY [--layers 36] [--tokens 128] [--model-only]
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import torch
from safetensors.torch import save_file
from transformers import Qwen3Config, Qwen3ForCausalLM


def prompts(batch, length, vocab):
    return torch.tensor([[(i * 7919 + j * 104729) % vocab for j in range(length)] for i in range(batch)])


def copy_bandwidth_gbs():
    n = 1 << 30  # 1 GiB each way, far above the 60 MB L2
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    times = []
    for _ in range(10):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    return 2 * n / statistics.median(times) / 1e9  # read + write


def hf_tokens_per_s(model, batch, length, tokens, vocab):
    ids = prompts(batch, length, vocab).cuda()
    mask = torch.ones_like(ids)
    kw = dict(attention_mask=mask, do_sample=False, pad_token_id=0, eos_token_id=None)
    model.generate(ids, max_new_tokens=4, min_new_tokens=4, **kw)  # warm-up
    times = []
    for _ in range(2):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = model.generate(ids, max_new_tokens=tokens, min_new_tokens=tokens, **kw)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        assert out.shape[1] == length + tokens, out.shape
    return batch * tokens / statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("bench")
    ap.add_argument("--layers", type=int, default=36)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--model-only", action="store_true",
                    help="write OUT/model and stop (the PPO step of scripts/gpu-train.sh uses it)")
    args = ap.parse_args()
    model_dir = os.path.join(args.out, "model")
    torch.manual_seed(0)
    cfg = Qwen3Config(vocab_size=151936, hidden_size=4096, intermediate_size=12288,
                      num_hidden_layers=args.layers, num_attention_heads=32, num_key_value_heads=8,
                      head_dim=128, max_position_embeddings=40960, rms_norm_eps=1e-6,
                      rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                      tie_word_embeddings=False, dtype="bfloat16")
    t0 = time.time()
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = Qwen3ForCausalLM(cfg)
    torch.set_default_dtype(torch.float32)
    model.eval()
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    model.save_pretrained(model_dir)
    print(f"model: {weight_bytes / 1e9:.2f} GB of weights, made and saved in {time.time() - t0:.0f} s",
          flush=True)
    if args.model_only:
        return

    with torch.no_grad():  # reference logits for the live parity test
        ids = prompts(2, 16, cfg.vocab_size).cuda()
        logits = model(ids).logits.float()
    save_file({"ids": ids.cpu().to(torch.int64).contiguous(), "logits": logits.cpu().contiguous()},
              os.path.join(model_dir, "expected.safetensors"))

    bw = copy_bandwidth_gbs()
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "weight_bytes": weight_bytes, "copy_bandwidth_gbs": bw,
              "bound_ms_per_step": weight_bytes / (bw * 1e9) * 1e3,
              "new_tokens": args.tokens, "prompt_tokens": args.prompt, "hf": {}, "sparserl": {}}
    with torch.no_grad():
        for batch in (1, 16, 64):
            tps = hf_tokens_per_s(model, batch, args.prompt, args.tokens, cfg.vocab_size)
            result["hf"][str(batch)] = tps
            print(f"transformers batch {batch}: {tps:.1f} tokens/s", flush=True)
    del model
    torch.cuda.empty_cache()

    env = dict(os.environ, SPARSERL_DECODE_MODEL=model_dir, SPARSERL_DECODE_TOKENS=str(args.tokens),
               SPARSERL_DECODE_PROMPT=str(args.prompt))
    proc = subprocess.run([args.bench, "--benchmark_format=json"], env=env, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        print(proc.stderr)
        raise SystemExit("bench_decode failed")
    # "sparserl": the default mode (CUDA graphs on the GPU); "sparserl_eager": the growing mode.
    result["sparserl_eager"] = {}
    for b in json.loads(proc.stdout)["benchmarks"]:
        key = "sparserl" if "auto_mode:1" in b["name"] else "sparserl_eager"
        result[key][str(int(b["batch"]))] = b["tokens_per_s"]
        result.setdefault("modes", {})[b["name"]] = b.get("label")
    for batch in ("1", "16", "64"):
        s, e, h = (result["sparserl"].get(batch), result["sparserl_eager"].get(batch),
                   result["hf"][batch])
        if s:
            print(f"batch {batch}: sparserl {s:.1f} tokens/s (eager {e or 0:.1f}), transformers "
                  f"{h:.1f} ({s / h:.2f}x); bound "
                  f"{int(batch) * 1e3 / result['bound_ms_per_step']:.0f} tokens/s")
    with open(os.path.join(args.out, "decode.json"), "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
