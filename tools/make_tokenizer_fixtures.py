#!/usr/bin/env python3
"""Builds the tokenizer fixtures of tests/text/fixtures/ with HF `tokenizers` (the reference).

    pip install tokenizers          # 0.20 or newer (reads both merges forms)
    python3 tools/make_tokenizer_fixtures.py [--out tests/text/fixtures]

Writes:
  tokenizer.json         Qwen2-style: NFC, Split(Qwen2 regex, Isolated) +
                         ByteLevel(use_regex=False), BPE with merges as [["a","b"], ...],
                         special tokens appended after the vocab.
  tokenizer_legacy.json  the same model with merges as "a b" strings, a TemplateProcessing
                         post-processor (so add_special_tokens matters) and added tokens that use
                         the lstrip / rstrip / single_word / normalized / non-special flags.
  expected_ids.json      for each test string: HF's ids (with and without special tokens) and
                         decodes for both files, and Python's NFC of the string.
The C++ tests (tests/text/test_tokenizer.cpp) must reproduce every id exactly.
"""
import argparse
import glob
import inspect
import json
import os
import unicodedata

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

UNICODE_SAMPLES = [
    "Größenordnung der Matrix: dünn besetzt, Überlauf vermeiden.",
    "稀疏矩阵乘法的内核需要合并访存。每个线程块处理若干行。",
    "疎行列とベクトルの積を計算するカーネルを書いてください。",
    "희소 행렬 곱셈 커널을 작성하십시오.",
    "Разреженная матрица хранится в формате CSR.",
    "Η αραιή μήτρα έχει λίγα μη μηδενικά στοιχεία.",
    "مصفوفة متفرقة ذات عناصر قليلة غير صفرية",
    "Emoji: 🚀 fast 🔥 kernels ✅ correct ❌ wrong 👩‍💻 🇩🇪 👍🏽",
    "café naïve résumé coöperate façade jalapeño",
    "math: ∑ ∀x ∈ ℝ, x² ≥ 0; ≤ ≠ ≈ √ ∞ → ⇒",
]

TEST_STRINGS = [
    "",
    "Hello world",
    " Hello  world ",
    "The quick brown fox jumps over the lazy dog.",
    "I'm sure they'll say it's fine, but we'd've known. DON'T SHOUT, HE'S LOUD; 'Tis 'RE 'VE",
    "ſ'ſ 'ſ",  # long s case-folds to s inside (?i:'s)
    "__global__ void spmv_csr(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,\n"
    "                         const float* __restrict__ values, const float* __restrict__ x,\n"
    "                         float* __restrict__ y, int rows) {\n"
    "  int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (row >= rows) return;\n"
    "  float sum = 0.0f;\n"
    "  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) sum += values[i] * x[col_idx[i]];\n"
    "  y[row] = sum;\n"
    "}\n",
    "#pragma unroll 4\n\tfor (int k = 0; k < 32; k += 8) {\r\n"
    "\t\tacc[k] = __shfl_down_sync(0xffffffff, v, 16);\r\n\t}\r\n",
    "FORMAT: SELL C=32 sigma=256\nLAUNCH: block=256 rows_per_block=8\n",
    "tabs\tand\t\ttabs\t \t mixed",
    "trailing spaces   ",
    "   leading spaces",
    "newline runs\n\n\n\nand\r\n\r\nCRLF\r\rCR",
    "spaces before newline    \n    indented",
    "digits 1234567890 3.14159 1e-6 0x7fffffff 2^31-1",
    "a" * 300,
    "=" * 120 + "\n" + "/" * 80,
    "稀疏矩阵乘法的内核需要合并访存。",
    "東京の天気は晴れです。漢字かなカナ",
    "🚀🔥 emoji 👩‍👩‍👧‍👦 family, flag 🇯🇵, skin 👋🏿, keycap 1️⃣",
    "e\u0301 vs é, A\u030a vs Å, \u212b angstrom, \u1100\u1161\u11a8 jamo, o\u0308\u0304",
    "Ω ohm \u2126 sign, ﬁ ligature, ½ fraction, ① circled",
    "nbsp\u00a0here, ideographic\u3000space, thin\u2009space, nel\u0085line, ls\u2028ps\u2029end",
    "zero\u200bwidth joiner\u200d and bom\ufeff",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\nWrite an SpMV kernel.<|im_end|>\n<|im_start|>assistant\n",
    "text<|endoftext|>more text<|endoftext|>",
    "<|im_start|><|im_end|><|endoftext|>",
    "partial <|im_start and <|im_end| and <|endoftext",
    " <|im_end|> spaced special ",
    "<think>reasoning</think> answer",
    "an <mask> here and <mask>, and  <mask>  spaced",
    "kernel kernels kernel_ akernel kernel. (kernel)",
    "caf\u00e9 vs cafe\u0301 normalized token: café",
    "Mixed 中文 and English and 한국어 and русский текст 123",
    "math: ∑ ∀x ∈ ℝ, x² ≥ 0; ≤ ≠ ≈ √ ∞",
    "   \n\t \r\n  ",
    "\n",
    " ",
    "x" + " " * 17 + "y",
    "ends with newline\n",
]


def english_prose():
    """Docstrings of the standard library: real English text available offline."""
    import collections, functools, itertools, json as json_mod, pathlib, re, string, textwrap
    mods = [collections, functools, itertools, json_mod, pathlib, re, string, textwrap, inspect]
    docs = []
    for m in mods:
        docs.append(inspect.getdoc(m) or "")
        for _, obj in inspect.getmembers(m):
            d = inspect.getdoc(obj)
            if d and len(d) > 80:
                docs.append(d)
    return sorted(set(docs))


def cuda_snippets(limit_bytes=600_000):
    inc = "/usr/local/cuda/include"
    paths = sorted(glob.glob(f"{inc}/*.h") + glob.glob(f"{inc}/*.hpp"))
    out, total = [], 0
    for p in paths:
        with open(p, encoding="utf-8", errors="replace") as f:
            text = f.read()[:40_000]
        out.append(text)
        total += len(text)
        if total >= limit_bytes:
            break
    return out


def training_texts():
    texts = cuda_snippets() + english_prose() + UNICODE_SAMPLES * 20
    texts += [s for s in TEST_STRINGS if "<|" not in s]  # so the vocab covers them a little
    if len(texts) < 50:
        raise SystemExit("make_tokenizer_fixtures: too little training text (no CUDA headers?)")
    return texts


def build_main(vocab_size):
    tok = Tokenizer(models.BPE(ignore_merges=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(training_texts(), trainer)
    # As in Qwen2: the special tokens come after the model's vocab, special, not normalized.
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIAL])
    return tok


def build_legacy(main_json):
    tok = Tokenizer.from_str(main_json)
    tok.add_tokens([AddedToken("<think>", special=False, normalized=False),
                    AddedToken("</think>", special=False, normalized=False),
                    AddedToken("kernel", single_word=True, special=False, normalized=True),
                    AddedToken("café", special=False, normalized=True)])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=True, special=True,
                                       normalized=False)])
    start = tok.token_to_id("<|im_start|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|im_start|> $A", pair="<|im_start|> $A $B:1",
                                      special_tokens=[("<|im_start|>", start)]),
    ])
    data = json.loads(tok.to_str())
    merges = data["model"]["merges"]
    assert all(" " not in a and " " not in b for a, b in merges)
    data["model"]["merges"] = [f"{a} {b}" for a, b in merges]  # the pre-0.20 form
    return json.dumps(data, ensure_ascii=False, indent=2)


def expectations(tok):
    with_special = [e.ids for e in tok.encode_batch(TEST_STRINGS, add_special_tokens=True)]
    without = [e.ids for e in tok.encode_batch(TEST_STRINGS, add_special_tokens=False)]
    tok.encode_special_tokens = True  # special tokens in the text are then plain text
    specials_as_text = [e.ids for e in tok.encode_batch(TEST_STRINGS, add_special_tokens=False)]
    tok.encode_special_tokens = False
    return {
        "ids": with_special,
        "ids_no_special": without,
        "ids_specials_as_text": specials_as_text,
        "decoded": [tok.decode(ids, skip_special_tokens=False) for ids in with_special],
        "decoded_skip_special": [tok.decode(ids, skip_special_tokens=True) for ids in with_special],
        "vocab_size": tok.get_vocab_size(with_added_tokens=True),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "text",
                                                  "fixtures"))
    ap.add_argument("--vocab", type=int, default=2000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    main_tok = build_main(args.vocab)
    main_json = main_tok.to_str(pretty=True)
    legacy_json = build_legacy(main_json)
    files = {"tokenizer.json": main_json, "tokenizer_legacy.json": legacy_json}
    expected = {"strings": TEST_STRINGS,
                "nfc": [unicodedata.normalize("NFC", s) for s in TEST_STRINGS],
                "tokenizers_version": __import__("tokenizers").__version__, "files": {}}
    for name, text in files.items():
        path = os.path.join(args.out, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        # Expectations come from the file as written, so they test what the C++ side reads.
        expected["files"][name] = expectations(Tokenizer.from_file(path))
        print(f"wrote {path} ({os.path.getsize(path) // 1024} KB)")
    path = os.path.join(args.out, "expected_ids.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False)
    print(f"wrote {path} ({len(TEST_STRINGS)} strings)")


if __name__ == "__main__":
    main()
