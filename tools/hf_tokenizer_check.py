#!/usr/bin/env python3
"""Answers a request with HF `tokenizers`, so C++ tests can compare against the reference.

    pip install tokenizers
    python3 tools/hf_tokenizer_check.py REQUEST.json RESPONSE.json

REQUEST: {"tokenizer": "path/tokenizer.json", "strings": [...],
          "train": {"files": [...], "vocab_size": N, "min_frequency": M, "pattern": "..."}}
(both parts optional). RESPONSE: {"ids": [[...]], "decoded": [...], "vocab_size": N} for the
tokenizer part (ids with add_special_tokens=True), and {"merges": [[a, b], ...]} for the train
part: HF's BpeTrainer on the files (one sequence per file) with NFC, Split(pattern, Isolated) +
ByteLevel(use_regex=False) and the full byte alphabet, the setup bpe_trainer mirrors.
Exit status 3 when `tokenizers` is not importable (tests skip on it).
"""
import json
import sys

try:
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers
except ImportError:
    sys.exit(3)


def encode(req):
    tok = Tokenizer.from_file(req["tokenizer"])
    ids = [e.ids for e in tok.encode_batch(req["strings"], add_special_tokens=True)]
    return {"ids": ids, "decoded": [tok.decode(i, skip_special_tokens=False) for i in ids],
            "vocab_size": tok.get_vocab_size(with_added_tokens=True)}


def train(req):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(req["pattern"]), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(vocab_size=req["vocab_size"], min_frequency=req["min_frequency"],
                                  show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    texts = []
    for path in req["files"]:
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.append(f.read())
    tok.train_from_iterator(texts, trainer)
    return {"merges": json.loads(tok.to_str())["model"]["merges"]}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        req = json.load(f)
    out = {}
    if "tokenizer" in req:
        out.update(encode(req))
    if "train" in req:
        out.update(train(req["train"]))
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
