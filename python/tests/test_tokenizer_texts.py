"""tools/tokenizer_texts.py: the tokenizer's training texts from an SFT label file (gzip or plain)
and a pre-training corpus, as scripts/gpu-learn.sh and scripts/cpu-sft-proxy.sh call it."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "tokenizer_texts.py")


def test_programs_end_with_the_chat_end_token_and_corpus_documents_follow_one_a_line(tmp_path):
    programs = ["FORMAT: CSR\n__global__ void a() {}", "FORMAT: ELL\n__global__ void b() {}"]
    for name, opener in (("labels.jsonl.gz", gzip.open), ("labels.jsonl", open)):
        labels = tmp_path / name
        with opener(labels, "wt") as f:
            for p in programs:
                f.write(json.dumps({"code": p, "format": p.split()[1]}) + "\n\n")  # a blank line
        corpus = tmp_path / "corpus.jsonl"
        corpus.write_text(json.dumps({"text": "// doc one"}) + "\n" + json.dumps({"text": "x"}) + "\n")
        out = tmp_path / ("texts-" + name)
        subprocess.run([sys.executable, TOOL, str(labels), str(corpus), str(out)], check=True)
        assert (out / "programs.txt").read_text() == "".join(p + "<|im_end|>\n" for p in programs)
        assert (out / "corpus.txt").read_text() == "// doc one\nx\n"


def test_wrong_arguments_give_the_usage_line(tmp_path):
    r = subprocess.run([sys.executable, TOOL, "only-one"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "usage: tokenizer_texts.py" in r.stderr


def test_a_missing_file_is_one_error_line(tmp_path):
    r = subprocess.run([sys.executable, TOOL, str(tmp_path / "nope.jsonl.gz"), str(tmp_path / "c"),
                        str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode != 0
    assert r.stderr.count("\n") == 1 and "nope.jsonl.gz" in r.stderr
