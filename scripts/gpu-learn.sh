#!/usr/bin/env bash
# On one H200 (the device tool, carry [".deps"]): the learning recipe from scratch in at most
# ~9 minutes, then the SFT and the PPO policy judged on held-out large matrices.
#  1. labels: `dataset build --device gpu` (each matrix's label is the tuner's fastest correct
#     program, the whole ranking kept) over generated matrices of the training families; labels
#     add up over runs: an existing $LABELS is extended, not rebuilt;
#  2. reward and held-out matrices: .mtx files of >= MIN_NNZ nonzeros (the GPU reward rule,
#     docs/training.md "Reward matrices"): PPO's from the training families, the held-out ones
#     from families never trained on;
#  3. pre-training on the CUDA corpus, SFT on the labels, PPO with G samples per matrix and the
#     leave-one-out baseline (--samples-per-task 8 --advantage rloo);
#  4. `evaluate-policy --samples 8 --device gpu` for the SFT and the PPO policy on the held-out
#     matrices (and on every .mtx in $EVAL_MATRICES), each with its table, JSON and PNG.
# Environment: SEED (default 1), WORK (everything the run makes; default /tmp/gpu-learn), OUT
# (figures, plots, logs; default ./out), EVAL_MATRICES (a folder of .mtx), LABELS (the label file
# to extend; default $WORK/labels.jsonl.gz), and the sizes below. Prints where the final policy is.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# --- The families (set after the family registry lands: `sparserl matrix gen --help` lists them).
# Whole families are held out: no training, SFT or PPO matrix comes from HELDOUT_FAMILIES.
TRAIN_FAMILIES=${TRAIN_FAMILIES:-stencil2d,stencil3d,banded,block_diagonal,random,rmat}
HELDOUT_FAMILIES=${HELDOUT_FAMILIES:-fem,circuit,lp}
# --- Sizes (one H200, ~9 minutes with the stage limits below).
MIN_NNZ=${MIN_NNZ:-1000000}          # reward / held-out matrices: at least this many nonzeros
LABEL_NEW=${LABEL_NEW:-64}           # matrices labelled on this run (added to $LABELS)
LABEL_MAX_ROWS=${LABEL_MAX_ROWS:-65536}
PPO_MATRICES=${PPO_MATRICES:-12}     # large reward matrices of the training families
HELDOUT_PER_FAMILY=${HELDOUT_PER_FAMILY:-7}
MODEL_ARGS=${MODEL_ARGS:---init-hidden 512 --init-layers 8 --init-heads 8 --init-kv-heads 4 --init-intermediate 1536}
MAX_NNZ_EMBED=${MAX_NNZ_EMBED:-128}  # nonzeros the matrix embedding samples
PRETRAIN_STEPS=${PRETRAIN_STEPS:-150}
SFT_STEPS=${SFT_STEPS:-300}
PPO_STEPS=${PPO_STEPS:-12}
GROUP=${GROUP:-8}                    # --samples-per-task
PPO_BATCH=${PPO_BATCH:-64}           # rollouts per step: PPO_BATCH / GROUP matrices
EVAL_SAMPLES=${EVAL_SAMPLES:-8}
# Stage limits in seconds (sum ~540 s without the build).
LIMIT_LABELS=${LIMIT_LABELS:-100} LIMIT_PRETRAIN=${LIMIT_PRETRAIN:-60} LIMIT_SFT=${LIMIT_SFT:-90}
LIMIT_PPO=${LIMIT_PPO:-170} LIMIT_EVAL=${LIMIT_EVAL:-60}

seed=${SEED:-1}
work=${WORK:-/tmp/gpu-learn}
out=${OUT:-$PWD/out}
labels=${LABELS:-$work/labels.jsonl.gz}
mkdir -p "$out" "$work"
bin=$PWD/build-gpu/src/cli/sparserl
summary=$out/learn-summary.txt
say() { echo "gpu-learn: $*" | tee -a "$summary"; }
# stage NAME LIMIT CMD...: runs CMD under a time limit, its output in $out/NAME.log.
stage() {
  local name=$1 limit=$2 start=$SECONDS rc
  shift 2
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  say "$name: rc=$rc in $((SECONDS - start)) s (limit $limit s)"
  tail -3 "$out/$name.log" | tee -a "$summary"
  return $rc
}

if [[ ! -x $bin ]]; then
  start=$SECONDS
  CTEST_REGEX='^$' GPU_TESTS='^$' OUT="$out/check" bash scripts/gpu-check.sh >"$out/check.log" 2>&1
  say "build in $((SECONDS - start)) s (not counted in the recipe's time)"
fi
[[ -x $bin ]] || { say "no $bin: see $out/check.log"; exit 1; }
say "seed $seed, work $work, train families $TRAIN_FAMILIES, held out $HELDOUT_FAMILIES"
t0=$SECONDS

# gen_large FAMILY SEED ROWS OUT: a .mtx of FAMILY with >= MIN_NNZ nonzeros (each family's own
# defaults otherwise); when ROWS gives too few, the rows are scaled by the shortfall and it is
# generated again.
gen_large() {
  local family=$1 s=$2 rows=$3 file=$4 nnz
  for _ in 1 2 3 4; do
    nnz=$("$bin" matrix gen "$family" --rows "$rows" --seed "$s" -o "$file" |
      sed -n 's/.*, \([0-9]*\) nonzeros.*/\1/p')
    [[ -n $nnz ]] || break
    ((nnz >= MIN_NNZ)) && return 0
    rows=$((rows * MIN_NNZ * 5 / (4 * (nnz > 0 ? nnz : 1)) + 1))
  done
  echo "gen_large: $family did not reach $MIN_NNZ nonzeros" >&2
  rm -f "$file"
  return 1
}

# 1. Labels (timing on the GPU), extending the earlier ones.
# The generator seed follows SEED and the number of labels so far: each run adds new matrices.
extend=()
earlier=0
if [[ -f $labels ]]; then
  extend=(--extend "$labels")
  earlier=$(gzip -cdf "$labels" | wc -l)
fi
stage labels "$LIMIT_LABELS" "$bin" dataset build --device gpu --generate "$LABEL_NEW" \
  --families "$TRAIN_FAMILIES" --seed "$((seed * 100003 + earlier))" \
  --max-rows "$LABEL_MAX_ROWS" --max-nnz 4000000 --no-progress "${extend[@]}" \
  -o "$work/labels.new.jsonl.gz" &&
  mv "$work/labels.new.jsonl.gz" "$labels"
[[ -f $labels ]] || { say "no labels in $labels"; exit 1; }
cp "$labels" "$out/labels.jsonl.gz"

# 2. Large matrices: PPO's (training families) and the held-out ones (families not trained on).
start=$SECONDS
rm -rf "$work/ppo-matrices" "$work/held-out"
mkdir -p "$work/ppo-matrices" "$work/held-out"
IFS=, read -r -a train_fams <<<"$TRAIN_FAMILIES"
IFS=, read -r -a held_fams <<<"$HELDOUT_FAMILIES"
for ((i = 0; i < PPO_MATRICES; ++i)); do
  f=${train_fams[i % ${#train_fams[@]}]}
  gen_large "$f" "$((seed * 100 + i))" $((40000 + 20000 * (i / ${#train_fams[@]}))) \
    "$work/ppo-matrices/$f-$i.mtx" &
done
for f in "${held_fams[@]}"; do
  for ((i = 0; i < HELDOUT_PER_FAMILY; ++i)); do
    gen_large "$f" "$((seed * 100 + 50 + i))" $((40000 + 15000 * i)) "$work/held-out/$f-$i.mtx" &
  done
done
wait  # the generators run at once, one per core
say "matrices: $(find "$work/ppo-matrices" -name "*.mtx" | wc -l) for PPO," \
  "$(find "$work/held-out" -name "*.mtx" | wc -l) held out," \
  ">= $MIN_NNZ nonzeros each, in $((SECONDS - start)) s"

# 3. Tokenizer, pre-training, SFT, PPO. The tokenizer learns the label programs (once per label)
# besides the corpus, so programs are short in tokens (as in the CPU quickstart).
"$bin" dataset corpus -o "$work/corpus.jsonl" --max-bytes $((4 << 20)) >"$out/corpus.log" 2>&1
rm -rf "$work/tokenizer-texts" && mkdir -p "$work/tokenizer-texts"
python3 - "$labels" "$work/corpus.jsonl" "$work/tokenizer-texts" <<'PY'
import gzip, json, sys
labels, corpus, out = sys.argv[1:]
with gzip.open(labels, "rt") as f, open(out + "/programs.txt", "w") as o:
    for line in f:
        if line.strip():
            o.write(json.loads(line)["code"] + "<|im_end|>\n")
with open(corpus) as f, open(out + "/corpus.txt", "w") as o:
    for line in f:
        if line.strip():
            o.write(json.loads(line)["text"] + "\n")
PY
"$bin" tokenizer train --corpus "$work/tokenizer-texts" --vocab 8192 -o "$work/tokenizer" \
  >"$out/tokenizer.log" 2>&1 || { say "tokenizer failed: $(tail -1 "$out/tokenizer.log")"; exit 1; }
# shellcheck disable=SC2086
stage pretrain "$LIMIT_PRETRAIN" "$bin" pretrain --device gpu --corpus "$work/corpus.jsonl" \
  --tokenizer-path "$work/tokenizer" $MODEL_ARGS --seed "$seed" --steps "$PRETRAIN_STEPS" --batch-size 16 --seq-len 512 --lr 1e-3 \
  --no-progress -o "$work/pretrain" || exit 1
stage sft "$LIMIT_SFT" "$bin" train-sft --device gpu --data "$labels" \
  --model-path "$work/pretrain/final" --max-nnz "$MAX_NNZ_EMBED" --seed "$seed" \
  --steps "$SFT_STEPS" --batch-size 16 --lr 5e-4 --no-progress -o "$work/sft" || exit 1
stage ppo "$LIMIT_PPO" "$bin" train-ppo --device gpu --model-path "$work/sft/final" \
  --tokenizer-path "$work/sft/final" --dataset-dir "$work/ppo-matrices" --min-nnz "$MIN_NNZ" \
  --max-nnz "$MAX_NNZ_EMBED" --seed "$seed" --steps "$PPO_STEPS" --samples-per-task "$GROUP" \
  --advantage rloo --batch-size "$PPO_BATCH" --mini-batch 16 --ppo-epochs 1 --lr 2e-5 \
  --max-new-tokens 1024 --reward-threads 16 --workers 8 --no-progress -o "$work/ppo"
ppo_rc=$?
final=$work/ppo/final
[[ $ppo_rc == 0 && -d $final ]] || final=$work/sft/final
say "training done in $((SECONDS - t0)) s"

# 4. Both policies on the held-out matrices (and EVAL_MATRICES), the same report for each.
evaluate() {  # NAME MODEL MATRICES...
  local name=$1 model=$2
  shift 2
  stage "eval-$name" "$LIMIT_EVAL" "$bin" evaluate-policy --model "$model" --matrices "$@" \
    --samples "$EVAL_SAMPLES" --device gpu --max-nnz "$MAX_NNZ_EMBED" -o "$out/eval-$name"
}
evaluate sft "$work/sft/final" "$work/held-out"
[[ -d $work/ppo/final ]] && evaluate ppo "$work/ppo/final" "$work/held-out"
if [[ -n ${EVAL_MATRICES:-} ]]; then
  evaluate sft-extra "$work/sft/final" "$EVAL_MATRICES"
  [[ -d $work/ppo/final ]] && evaluate ppo-extra "$work/ppo/final" "$EVAL_MATRICES"
fi
say "recipe (labels to evaluation) in $((SECONDS - t0)) s"

for run in pretrain sft ppo; do
  [[ -f $work/$run/metrics.jsonl ]] || continue
  cp "$work/$run/metrics.jsonl" "$out/$run-metrics.jsonl"
  "$bin" plot "$work/$run" >/dev/null 2>&1 &&
    { mkdir -p "$out/plots/$run" && cp "$work/$run"/plots/*.png "$out/plots/$run/"; }
done
say "final policy: $final"
