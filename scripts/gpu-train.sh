#!/usr/bin/env bash
# On the GPU machine (the device tool, carry [".deps"]), after or instead of scripts/gpu-check.sh:
#  1. the whole pipeline on a ~34M-parameter Qwen3 (`sparserl quickstart --device gpu`: data,
#     tokenizer, pre-training, SFT, the held-out matrices judged, PPO, judged again) with its plots;
#  2. one PPO step with LoRA on a random Qwen3-8B-shaped model (tools/decode_bench.py --model-only),
#     its step time split into generation / reward / update, peak device memory sampled by
#     nvidia-smi every 200 ms.
# Results under $OUT: quickstart.log, held_out.json, plots/, ppo8b.log, ppo8b-metrics.jsonl,
# ppo8b-memory.csv. QS_ARGS adds quickstart options; SKIP_QS=1 skips part 1, SKIP_8B=1 part 2;
# PPO8B_MODEL names an 8B-shaped HF directory already written (scripts/gpu-decode.sh with
# DECODE_KEEP=1); QS_PPO_STEPS and QS_PPO_LR set the quickstart's PPO; QS_LIMIT_S and PPO8B_LIMIT_S
# bound the two parts. Part 1 ends with group-relative PPO and evaluate-policy on the quickstart's
# policy (group-ppo.log, evaluate_policy/; SKIP_GROUP=1 skips them).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}
mkdir -p "$out"
work=${TRAIN_WORK:-/tmp/gpu-train}
rm -rf "$work" && mkdir -p "$work"
bin=build-gpu/src/cli/sparserl
say() { echo "gpu-train: $*" | tee -a "$out/train-summary.txt"; }

if [[ ! -x $bin ]]; then
  CTEST_REGEX='^$' GPU_TESTS='^$' OUT="$out/check" bash scripts/gpu-check.sh >"$out/check.log" 2>&1
  cat "$out/check/summary.txt" >>"$out/check.log" 2>/dev/null
fi

# 1. The pipeline at a small scale that still learns something in minutes.
if [[ ${SKIP_QS:-0} != 1 ]]; then
start=$SECONDS
# shellcheck disable=SC2086
timeout "${QS_LIMIT_S:-600}" "$bin" quickstart --device gpu -o "$work/qs" --matrices 64 --max-rows 4000 \
  --hidden 512 --layers 8 --heads 8 --kv-heads 4 --intermediate 1536 --vocab 8192 --max-nnz 128 \
  --pretrain-steps 100 --sft-steps 200 --sft-batch 8 --ppo-steps "${QS_PPO_STEPS:-4}" --ppo-batch 16 \
  --corpus-bytes $((2 << 20)) --pretrain-lr 1e-3 --sft-lr 5e-4 --ppo-lr "${QS_PPO_LR:-2e-5}" \
  --max-new-tokens 512 ${QS_ARGS:-} >"$out/quickstart.log" 2>&1
say "quickstart rc=$? in $((SECONDS - start)) s"
grep -E '^\[|loss|extracted|step [0-9]+:|verdict|done' "$out/quickstart.log" | tee -a "$out/train-summary.txt"
cp "$work/qs/held_out.json" "$out/" 2>/dev/null
for stage in pretrain sft ppo; do
  [[ -f $work/qs/$stage/metrics.jsonl ]] || continue
  cp "$work/qs/$stage/metrics.jsonl" "$out/$stage-metrics.jsonl"
  "$bin" plot "$work/qs/$stage" >/dev/null 2>&1 &&
    { mkdir -p "$out/plots/$stage" && cp "$work/qs/$stage"/plots/*.png "$out/plots/$stage/"; }
done

# 1b. Group-relative PPO (2 steps, 8 matrices x 4 programs, RLOO) from the quickstart's policy,
# and evaluate-policy with real timing on three ~1M-nonzero matrices (SKIP_GROUP=1 skips both).
if [[ ${SKIP_GROUP:-0} != 1 && -d $work/qs/final ]]; then
  start=$SECONDS
  timeout 300 "$bin" train-ppo --device gpu --model-path "$work/qs/final" --data "$work/qs/sft.jsonl" \
    --max-nnz 128 --steps 2 --batch-size 8 --samples-per-task 4 --advantage rloo --mini-batch 16 \
    --ppo-epochs 1 --max-new-tokens 512 --temperature 0.7 --lr 2e-5 --no-progress -o "$work/grpo" \
    >"$out/group-ppo.log" 2>&1
  say "group PPO rc=$? in $((SECONDS - start)) s: $(tail -1 "$out/group-ppo.log")"
  cp "$work/grpo/metrics.jsonl" "$out/group-ppo-metrics.jsonl" 2>/dev/null
  mkdir -p "$work/eval_mats"
  "$bin" matrix gen stencil2d --rows 250000 -o "$work/eval_mats/stencil2d.mtx" >/dev/null
  "$bin" matrix gen rmat --rows 65536 --avg-degree 16 -o "$work/eval_mats/rmat.mtx" >/dev/null
  "$bin" matrix gen banded --rows 100000 --bandwidth 5 -o "$work/eval_mats/banded.mtx" >/dev/null
  start=$SECONDS
  timeout 300 "$bin" evaluate-policy --device gpu --model "$work/qs/final" --matrices "$work/eval_mats" \
    --samples 4 --max-new-tokens 512 -o "$out/evaluate_policy" >"$out/evaluate-policy.log" 2>&1
  say "evaluate-policy rc=$? in $((SECONDS - start)) s"
  tee -a "$out/train-summary.txt" <"$out/evaluate-policy.log"
fi

fi

# 2. One LoRA PPO step on the 8B shape.
[[ ${SKIP_8B:-0} == 1 ]] && exit 0
model8b=${PPO8B_MODEL:-$work/8b/model}
if [[ -z ${PPO8B_MODEL:-} ]]; then
  start=$SECONDS
  python3 tools/decode_bench.py "$work/8b" none --model-only >"$out/ppo8b-model.log" 2>&1 ||
    { say "making the 8B model failed"; tail -5 "$out/ppo8b-model.log"; exit 1; }
  say "8B model written in $((SECONDS - start)) s"
fi
nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader,nounits -lms 200 \
  >"$out/ppo8b-memory.csv" 2>/dev/null &
smi=$!
start=$SECONDS
# The random model comes without a tokenizer: any will do for timing (its ids are a subset).
tokenizer=$model8b
[[ -f $model8b/tokenizer.json ]] || tokenizer=tests/text/fixtures
timeout "${PPO8B_LIMIT_S:-600}" "$bin" train-ppo --device gpu --model-path "$model8b" \
  --tokenizer-path "$tokenizer" --lora-rank 16 --steps 1 \
  --batch-size 8 --mini-batch 4 --ppo-epochs 1 --max-new-tokens 256 --generate 16 --max-nnz 128 \
  --reward-threads 8 --workers 4 --no-progress -o "$work/ppo8b" >"$out/ppo8b.log" 2>&1
rc=$?
kill "$smi" 2>/dev/null
say "8B LoRA PPO step rc=$rc in $((SECONDS - start)) s (load included)"
tail -5 "$out/ppo8b.log" | tee -a "$out/train-summary.txt"
cp "$work/ppo8b/metrics.jsonl" "$out/ppo8b-metrics.jsonl" 2>/dev/null && cat "$out/ppo8b-metrics.jsonl"
peak=$(cut -d, -f2 "$out/ppo8b-memory.csv" | sort -n | tail -1)
say "peak device memory used: ${peak:-?} MiB (nvidia-smi, 200 ms samples)"
rm -rf "$work"
