#!/usr/bin/env bash
# Is GPU training reproducible? Two `train-sft` runs of one seed with `--deterministic` and two
# without, from one checkpoint on one data file; per pair the first step whose loss differs, the
# largest loss difference and whether the final weights are equal, and each run's median
# tokens/s (the flag's cost). Prints a table; OUT gets determinism.json and each run's log and
# metrics.jsonl, WORK (default /tmp/gpu-determinism) the runs' checkpoints.
#
#   MODEL=DIR DATA=sft.jsonl[.gz] [STEPS=100] [SEED=1] [OUT=dir] [WORK=dir] [BIN=sparserl] \
#     scripts/gpu-determinism.sh
#
# MODEL is a checkpoint `train-sft --model-path` takes (gpu-learn.sh leaves one per seed in
# $WORK/seed-N/pretrain/final). DEVICE=cpu runs the same on the CPU (where both ways agree).
set -uo pipefail
: "${MODEL:?MODEL=DIR, a checkpoint (gpu-learn.sh leaves one in \$WORK/seed-N/pretrain/final)}"
: "${DATA:?DATA=FILE, SFT data (e.g. .deps/sft/sft-data-50k.jsonl.gz)}"
[[ -d $MODEL ]] || { echo "gpu-determinism: MODEL '$MODEL' is not a folder" >&2; exit 2; }
[[ -f $DATA ]] || { echo "gpu-determinism: DATA '$DATA' is not a file" >&2; exit 2; }
steps=${STEPS:-100} seed=${SEED:-1} out=${OUT:-$PWD/out} work=${WORK:-/tmp/gpu-determinism}
device=${DEVICE:-gpu}
bin=${BIN:-$PWD/build-gpu/src/cli/sparserl}
mkdir -p "$out" "$work"
runs=(plain-a plain-b det-a det-b)  # the analysis below pairs them as a-b
for run in "${runs[@]}"; do
  flag=()
  [[ $run == det-* ]] && flag=(--deterministic)
  s=$SECONDS
  rm -rf "${work:?}/$run"
  "$bin" train-sft --device "$device" --data "$DATA" --model-path "$MODEL" --seed "$seed" \
    --steps "$steps" --batch-size 16 --lr 5e-4 --no-progress "${flag[@]}" -o "$work/$run" \
    >"$out/$run.log" 2>&1 || { echo "gpu-determinism: $run failed: $(tail -1 "$out/$run.log")" >&2; exit 1; }
  cp "$work/$run/metrics.jsonl" "$out/$run-metrics.jsonl"
  echo "gpu-determinism: $run in $((SECONDS - s)) s"
done
tools=$(cd "$(dirname "$0")/../tools" && pwd)
python3 - "$out" "$work" "$tools" "${runs[@]}" <<'EOF'
import hashlib, json, pathlib, statistics, sys
out, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from learning_summary import read_metrics  # the JSON-lines reader of the learning summary
runs = sys.argv[4:]
steps = {run: [r for r in read_metrics(str(out / f"{run}-metrics.jsonl")) if "loss" in r]
         for run in runs}

def weights_digest(run):
    h = hashlib.sha256()
    files = sorted((work / run / "final").rglob("*.safetensors"))
    if not files:
        sys.exit(f"gpu-determinism: no weights in {work / run / 'final'}")
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()

report = {"runs": {}, "pairs": {}}
for run, rows in steps.items():
    report["runs"][run] = {"steps": len(rows), "final_loss": rows[-1]["loss"],
                           "median_tokens_per_s": statistics.median(r["tokens_per_s"] for r in rows)}
for a, b in zip(runs[0::2], runs[1::2]):
    la, lb = [r["loss"] for r in steps[a]], [r["loss"] for r in steps[b]]
    diffs = [abs(x - y) for x, y in zip(la, lb)]
    first = next((i + 1 for i, d in enumerate(diffs) if d != 0), None)
    report["pairs"][f"{a} vs {b}"] = {"first_differing_step": first, "max_loss_diff": max(diffs),
                                      "final_weights_equal": weights_digest(a) == weights_digest(b)}
(out / "determinism.json").write_text(json.dumps(report, indent=2) + "\n")
print("| runs | first step whose loss differs | largest loss difference | final weights equal |")
print("|---|---|---|---|")
for k, v in report["pairs"].items():
    print(f"| {k} | {v['first_differing_step'] or 'none'} | {v['max_loss_diff']:.3g} | {v['final_weights_equal']} |")
for k, v in report["runs"].items():
    print(f"{k}: {v['steps']} steps, final loss {v['final_loss']:.4f}, median {v['median_tokens_per_s']:.0f} tokens/s")
EOF
