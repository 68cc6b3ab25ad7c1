#!/usr/bin/env bash
# Regenerates the seed corpora fuzz/corpus/<target>/ from the repository's own fixtures and docs
# plus a few hand-written edge cases. Deterministic: running it again gives the same files, so the
# corpora in git are exactly what this script writes. scripts/fuzz.sh copies them before a run
# (libFuzzer adds what it finds to the copy, never to these).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'EOF'
import json, os, re, shutil, struct

root = "fuzz/corpus"
def target(name):
    d = os.path.join(root, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d
def put(d, name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

# ---- fuzz_matrix_market: the last byte's low bit sets allow_nonfinite --------------------------
d = target("fuzz_matrix_market")
put(d, "general_real.mtx", "%%MatrixMarket matrix coordinate real general\n% a comment\n3 4 4\n1 1 1.5\n2 3 -2e3\n3 4 0.25\n3 1 7\n")
put(d, "symmetric.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n2 1 -1\n3 2 4.5e-2\n")
put(d, "skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n3 1 -3\n")
put(d, "pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 1\n1 2\n2 2\n")
put(d, "integer_crlf.mtx", "%%MatrixMarket matrix coordinate integer general\r\n\r\n2 3 2\r\n1 3 -7\r\n2 2 12\r\n")
put(d, "duplicates_blank_lines.mtx", "%%matrixmarket MATRIX Coordinate REAL General\n\n2 2 3\n1 1 1\n\n1 1 2   \n2 2 inf\n")
put(d, "empty.mtx", "%%MatrixMarket matrix coordinate real general\n5 5 0\n")
put(d, "nonfinite.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 nan\n2 2 -inf\n1")

# ---- fuzz_safetensors_header: files in the format, tiny, plus the model fixtures' headers -------
d = target("fuzz_safetensors_header")
def safetensors(tensors, metadata=None, pad=True):
    header, body = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(data)]}
        body += data
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + body
put(d, "one_f32.safetensors", safetensors([("w", "F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4))]))
put(d, "mixed.safetensors", safetensors([
    ("a.bias", "BF16", [3], b"\x80\x3f" * 3), ("a.weight", "F16", [1, 2], b"\x00\x3c\x00\xc0"),
    ("flags", "BOOL", [2], b"\x01\x00"), ("ids", "I64", [1], struct.pack("<q", -5)),
    ("scalar", "F64", [], struct.pack("<d", 0.5)), ("zero", "I32", [0, 7], b"")],
    {"format": "pt", "note": "seed"}))
put(d, "empty_header.safetensors", safetensors([]))
put(d, "unpadded.safetensors", safetensors([("u8", "U8", [5], b"abcde"), ("i8", "I8", [1], b"\xff")], pad=False))
for fixture in ("qwen3_gqa", "qwen3_tied"):
    data = open(f"tests/model/fixtures/{fixture}/model.safetensors", "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    # The real names and dtypes, each tensor cut to 2 elements (the values do not matter).
    sizes = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I64": 8, "I32": 4}
    put(d, f"{fixture}.safetensors", safetensors(
        [(k, v["dtype"], [2], b"\1" * 2 * sizes.get(v["dtype"], 1))
         for k, v in sorted(header.items()) if k != "__metadata__"], header.get("__metadata__")))

# ---- fuzz_hf_config: the last byte's low bit sets allow_other -----------------------------------
d = target("fuzz_hf_config")
for fixture in ("qwen3_gqa", "qwen3_tied"):
    shutil.copy(f"tests/model/fixtures/{fixture}/config.json", os.path.join(d, f"{fixture}.json"))
base = json.load(open("tests/model/fixtures/qwen3_gqa/config.json"))
v5 = dict(base); del v5["rope_theta"]; v5["rope_parameters"] = {"rope_type": "default", "rope_theta": 1e6}
v5["eos_token_id"] = [1, 2]; v5["bos_token_id"] = 0
put(d, "transformers5.json", json.dumps(v5, indent=2) + "\n")
minimal = {k: base[k] for k in ("model_type", "vocab_size", "hidden_size", "intermediate_size",
                                 "num_hidden_layers", "num_attention_heads")}
put(d, "minimal_no_head_dim.json", json.dumps(minimal) + "\n")
other = dict(minimal); other["model_type"] = "llama"; other["torch_dtype"] = "float32"
put(d, "other_model_allowed.json", json.dumps(other) + "1")  # last byte odd: allow_other

# ---- fuzz_tokenizer_json: last byte even = text for the fixture, odd = tokenizer.json [NUL text] -
d = target("fuzz_tokenizer_json")
texts = {
    "ascii.txt": "Hello, world! It's 2026: spmv_csr(int rows) { y[row] = sum; }\n",
    "unicode.txt": "caf\u00e9 e\u0301 \u4f60\u597d \U0001f600 \u00a0tab\there\r\nnext  line\n",
    "special_tokens.txt": "<|im_start|>user\nhi<|im_end|><|endoftext|>\n",
    "code.txt": "__global__ void k(float* __restrict__ y) {\n    for (int i = 0; i < 32; ++i) y[i] += 1.0f;\n}\n",
}
for name, text in texts.items():
    put(d, name, text)
def shrink(path, keep):
    doc = json.load(open(path))
    vocab = {t: i for t, i in doc["model"]["vocab"].items() if i < keep}
    merges = []
    for m in doc["model"]["merges"]:
        a, b = m.split(" ") if isinstance(m, str) else m
        if a in vocab and b in vocab and a + b in vocab:
            merges.append(m)
    doc["model"]["vocab"], doc["model"]["merges"] = vocab, merges
    # Added tokens are numbered on from the vocabulary's size on load: the post-processor's ids
    # follow them, so the small file stays consistent (an inconsistent one is an error).
    renumbered, next_id = {}, len(vocab)
    for t in doc["added_tokens"]:
        renumbered[t["id"]] = vocab.get(t["content"], next_id)
        next_id += t["content"] not in vocab
        t["id"] = renumbered[t["id"]]
    def fix(node):
        if isinstance(node, dict):
            if "ids" in node and isinstance(node["ids"], list):
                node["ids"] = [renumbered.get(i, i) for i in node["ids"]]
            for v in node.values():
                fix(v)
        elif isinstance(node, list):
            for v in node:
                fix(v)
    fix(doc["post_processor"])
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
for fixture in ("tokenizer", "tokenizer_legacy"):
    small = shrink(f"tests/text/fixtures/{fixture}.json", 320)
    put(d, f"{fixture}_small.json", small + "\0" + "kernel caf\u00e9 <think>x</think> <mask> ok" + "1")

# ---- fuzz_completion: the last byte's low bit picks spmm ----------------------------------------
d = target("fuzz_completion")
doc = open("docs/kernel-abi.md", encoding="utf-8").read()
for i, block in enumerate(re.findall(r"```cuda\n(FORMAT:.*?)```", doc, re.S)):
    put(d, f"doc_example_{i}.txt", block)
# One minimal program per (op, format) from the ABI table of the same document.
rows = re.findall(r"^\| (spmv|spmm) \| (\w+) \| (.*?) \| `(.*?)` \|$", doc, re.M)
params = {"SELL": " C=32 sigma=256", "BSR": " r=4 c=4", "HYB": " width=8"}
for op, fmt, entries, args in rows:
    names = re.findall(r"`(\w+)`", entries)
    nnz = set(re.findall(r"`(\w+)` \(nnz\)", entries))
    args = re.sub(r"(\w+)\* ", r"\1* __restrict__ ", args)
    text = f"FORMAT: {fmt}{params.get(fmt, '')}\n"
    for e in names:
        work = "nnz_per_block=1024" if e in nnz and len(names) > 1 else "rows_per_block=128"
        k = " k_per_block=8" if op == "spmm" else ""
        text += f"LAUNCH {e}: block=128 {work}{k}\n" if len(names) > 1 else f"LAUNCH: block=128 {work}{k}\n"
    for e in names:
        text += f'extern "C" __global__ void {e}({args}) {{\n  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= rows) return;\n}}\n'
    put(d, f"{op}_{fmt.lower()}.txt", ("Here it is:\n```cuda\n" + text + "```\n") + ("1" if op == "spmm" else ""))
for name in sorted(os.listdir("tests/eval/hostile")) if os.path.isdir("tests/eval/hostile") else []:
    if name.endswith(".cu"):
        shutil.copy(os.path.join("tests/eval/hostile", name), os.path.join(d, "hostile_" + name))

# ---- fuzz_launch_line: 4 bytes work, 4 bytes k, then the line -----------------------------------
d = target("fuzz_launch_line")
lines = ["block=256 rows_per_block=8", "block=128 nnz_per_block=1024", "block=1024 grid=4096 shared=49152",
         "block=64, rows_per_block=1, k_per_block=8", "block=32 grid=2147483647 k_per_block=1",
         "block=1 rows_per_block=9223372036854775807 shared=0"]
for i, line in enumerate(lines):
    put(d, f"line_{i}.bin", struct.pack("<II", 100000 + 977 * i, 64 * i + 1) + line.encode())
print("make_seeds: " + ", ".join(f"{t} {len(os.listdir(os.path.join(root, t)))}" for t in sorted(os.listdir(root))))
EOF
