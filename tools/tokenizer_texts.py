#!/usr/bin/env python3
"""The texts a recipe's BPE tokenizer is trained on (`sparserl tokenizer train --corpus OUT_DIR`):
every program of an SFT label file, each closed by the chat end token as the policy writes it, and
every document of the pre-training corpus. Used by scripts/gpu-learn.sh and scripts/cpu-sft-proxy.sh.

Usage: tokenizer_texts.py LABELS.jsonl[.gz] CORPUS.jsonl OUT_DIR
"""
import gzip
import json
import os
import sys


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: tokenizer_texts.py LABELS.jsonl[.gz] CORPUS.jsonl OUT_DIR")
    labels, corpus, out = argv[1:]
    os.makedirs(out, exist_ok=True)
    opener = gzip.open if labels.endswith(".gz") else open
    with opener(labels, "rt") as f, open(os.path.join(out, "programs.txt"), "w") as o:
        for line in f:
            if line.strip():
                o.write(json.loads(line)["code"] + "<|im_end|>\n")
    with open(corpus) as f, open(os.path.join(out, "corpus.txt"), "w") as o:
        for line in f:
            if line.strip():
                o.write(json.loads(line)["text"] + "\n")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except (OSError, ValueError, KeyError) as e:  # one line, not a traceback
        sys.exit(f"tokenizer_texts: {type(e).__name__}: {e}")
