#!/usr/bin/env bash
# The CPU proxy of the learning recipe's SFT stage (no GPU; ~37 minutes a seed on 2 cores, most
# of it the 200 SFT steps at ~10 s each): a small Qwen3 trained on heuristic labels of the
# training families, and its greedy program for each held-out matrix (families never trained on)
# compared with the heuristic's pick: the same program, the same template (the expert config's
# name and format), the same format. On the GPU the heuristic's pick is within ~1% of the tuned
# best on the held-out families (docs/benchmarks.md), so agreeing with it is what "greedy >= the
# heuristic" asks there; this compares data and prompt variants before a GPU run is spent on
# them. The protocol is the one of docs/results/cpu-sft-*-2026-12-0[45].txt (labels on matrices
# of 5-40k rows, held-out mesh3d, fem_mesh and road x natural / random / RCM order x 20k and 40k
# rows), with the label families of gpu-learn.sh's LABEL_FAMILIES, which since added knn_sym and
# (2026-12-06) fem twice more.
#
# Environment: SEEDS (default "1 2"), LABELS (heuristic labels, default 600), BLOCK_SIZES (as
# gpu-learn.sh, but unset by default here: the earlier proxy runs' protocol), LABEL_FAMILIES (as
# gpu-learn.sh), MIN_ROWS / MAX_ROWS (the labelled matrices' rows, default 5000 / 40000),
# HELD_ROWS (the held-out matrices' rows, one size each, default "20000 40000"), SFT_STEPS (200),
# WORK (default /tmp/cpu-sft-proxy), OUT (the report; default ./out/cpu-sft-proxy.txt). Prints one
# summary line a seed and the per-matrix table.
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
bin=${BIN:-$PWD/build/src/cli/sparserl}
seeds=${SEEDS:-1 2}
labels=${LABELS:-600}
sft_steps=${SFT_STEPS:-200}
min_rows=${MIN_ROWS:-5000} max_rows=${MAX_ROWS:-40000}
read -r -a held_rows <<<"${HELD_ROWS:-20000 40000}"
work=${WORK:-/tmp/cpu-sft-proxy}
out=${OUT:-$PWD/out/cpu-sft-proxy.txt}
# LABEL_FAMILIES: gpu-learn.sh's default unless set; keep the two defaults the same.
families=${LABEL_FAMILIES:-mesh2d,knn,powerlaw,stencil3d,mesh2d,knn,powerlaw,fem,mesh2d,knn,powerlaw,circuit,stencil2d,rmat,random,banded,block_diagonal,lp,knn_sym,knn_sym,fem,fem}
[[ -x $bin ]] || { echo "cpu-sft-proxy: $bin not built (scripts/setup.sh)" >&2; exit 1; }
mkdir -p "$work" "$(dirname "$out")"
log() { echo "cpu-sft-proxy: $*" >&2; }

log "labels: $labels matrices of the training families, heuristic picks"
"$bin" dataset build --device cpu --label heuristic --no-verify --generate "$labels" \
  --families "$families" --seed 50021 --min-rows "$min_rows" --max-rows "$max_rows" \
  --max-matrix-nnz 20000 ${BLOCK_SIZES:+--block-sizes "$BLOCK_SIZES"} --no-progress \
  -o "$work/sft.jsonl.gz" >&2

held=$work/held-out
rm -rf "$held" && mkdir -p "$held"
for f in mesh3d fem_mesh road; do
  for o in natural random rcm; do
    for i in "${!held_rows[@]}"; do
      "$bin" matrix gen "$f" --rows "${held_rows[i]}" --order "$o" --seed $((1000 + i)) \
        -o "$held/$f-$o-$i.mtx" >/dev/null
    done
  done
done

"$bin" dataset corpus -o "$work/corpus.jsonl" --max-bytes $((4 << 20)) >/dev/null
rm -rf "$work/tokenizer-texts"
python3 tools/tokenizer_texts.py "$work/sft.jsonl.gz" "$work/corpus.jsonl" "$work/tokenizer-texts"
"$bin" tokenizer train --corpus "$work/tokenizer-texts" --vocab 4096 -o "$work/tokenizer" >/dev/null

: >"$out.rows"
for seed in $seeds; do
  run=$work/seed-$seed
  rm -rf "$run" && mkdir -p "$run"
  log "seed $seed: pre-training, SFT ($sft_steps steps), greedy programs on $(ls "$held" | wc -l) held-out matrices"
  "$bin" pretrain --device cpu --corpus "$work/corpus.jsonl" --tokenizer-path "$work/tokenizer" \
    --seed "$seed" --steps 40 --batch-size 16 --seq-len 512 --lr 1e-3 --no-progress \
    -o "$run/pretrain" >"$run/pretrain.log" 2>&1
  "$bin" train-sft --device cpu --data "$work/sft.jsonl.gz" --model-path "$run/pretrain/final" \
    --seed "$seed" --steps "$sft_steps" --batch-size 16 --lr 1e-3 --no-progress \
    -o "$run/sft" >"$run/sft.log" 2>&1
  "$bin" evaluate-policy --model "$run/sft/final" --matrices "$held" --samples 1 --no-tune \
    --device cpu --seed "$seed" -o "$run/eval" >"$run/eval.log" 2>&1
  python3 - "$run/eval/evaluate_policy.json" "$seed" >>"$out.rows" <<'PY'
import json, re, sys
path, seed = sys.argv[1:]
def config(program):  # the expert config a program names in its "// expert:" line
    m = re.search(r"^// expert: (.*)$", program or "", re.M)
    return m.group(1).strip() if m else "(none)"
for m in json.load(open(path))["matrices"]:
    print("\t".join([seed, m["matrix"].removesuffix(".mtx"), m.get("heuristic_config", ""),
                     config(m.get("greedy_program")), str(bool(m.get("greedy", {}).get("correct")))]))
PY
done

python3 - "$out.rows" "$labels" "${BLOCK_SIZES:-}" >"$out" <<'PY'
import collections, sys
rows, labels, blocks = sys.argv[1], sys.argv[2], sys.argv[3]
by_seed = collections.defaultdict(list)
for line in open(rows):
    seed, matrix, expected, written, correct = line.rstrip("\n").split("\t")
    by_seed[seed].append((matrix, expected, written, correct == "True"))
def template(c):  # "csr_vector spmv CSR block=128 lanes=4" -> "csr_vector CSR"
    w = c.split()
    return " ".join(w[:1] + w[2:3])
print(f"# cpu-sft-proxy: {labels} heuristic labels" + (f", block sizes {blocks}" if blocks else ""))
for seed, ms in by_seed.items():
    n = len(ms)
    print(f"seed {seed}: {n} matrices, same program {sum(e == w for _, e, w, _ in ms)}, "
          f"same template {sum(template(e) == template(w) for _, e, w, _ in ms)}, "
          f"same format {sum(e.split()[2:3] == w.split()[2:3] for _, e, w, _ in ms)}, "
          f"correct {sum(c for *_, c in ms)}")
for seed, ms in by_seed.items():
    for matrix, expected, written, correct in ms:
        print(f"{seed} | {matrix} | {expected} | {written}{'' if correct else ' (not correct)'}")
PY
rm -f "$out.rows"
head -n $((1 + $(wc -w <<<"$seeds"))) "$out"
