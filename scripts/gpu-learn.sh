#!/usr/bin/env bash
# The learning recipe on one H200 (the device tool, carry [".deps"]): from the committed timed
# labels, for each seed in SEEDS, a policy trained from scratch (tokenizer, pre-training, SFT,
# group-relative PPO) and judged before and after PPO on held-out large matrices of families it
# never trained on; then a summary over the seeds (mean and spread). docs/training.md, "The GPU
# learning recipe", says why each size is what it is.
#
#  0. labels (only when LABEL_SECONDS > 0): more matrices of the training families labelled by
#     timing (`dataset build --device gpu`: the tuner's fastest correct program, the whole ranking
#     kept), in chunks that each extend $LABELS, until LABEL_SECONDS are spent;
#  0b. RETIME=1: every timed label's ranking brought up to date with the expert library
#     (`dataset retime`: the templates added since it was timed, e.g. RCSR, timed beside its
#     recorded best and merged; the label follows the fastest); out/labels-retimed.jsonl.gz is the
#     file to commit as the new labels;
#  1. held-out matrices: HELDOUT_FAMILIES x node orders x sizes, >= MIN_NNZ nonzeros each, the same
#     for every seed (their own generator seed);
#  1b. SFT data: the timed labels plus HEURISTIC_LABELS more matrices of the same training families
#     labelled by the feature heuristic (`dataset build --label heuristic`, seconds on the CPU): the
#     timed labels alone are memorised (SFT train loss 0.0008 on 190 samples); the heuristic's picks
#     spread the data over many more matrices. PPO's matrices come from these (PPO_FROM=heuristic):
#     matrices whose label is not the timed best, where sampling can find a faster program;
#  2. per seed: pre-training on the CUDA corpus, SFT on that data, PPO (G samples per matrix,
#     leave-one-out baseline) on training-split matrices of >= MIN_NNZ nonzeros;
#  3. per seed: `evaluate-policy` of the SFT and the PPO policy on the held-out matrices (and on
#     every .mtx in EVAL_MATRICES). Every column is timed in the evaluation's own run; only the
#     search for the tuned best is done once, by the first evaluation, and reused by content
#     (`--baselines`) by the others (its program is timed again in each);
#  4. tools/learning_summary.py: learning.{json,md,png} over the seeds.
#
# Environment: SEEDS (default "$SEED", else 1), BASELINES (below), PPO_STEPS=0 (SFT only),
# HEURISTIC_LABELS / HEURISTIC_MIN_ROWS / SFT_DATA / BLOCK_SIZES (step 1b), PPO_FROM / PPO_STRATA /
# PPO_SFT_COEF / PPO_SFT_BATCH, PPO_HEADER_TEMPERATURE / PPO_HEADER_TOP_P, PAIRED (a second PPO
# from the same SFT policy, below),
# DETERMINISTIC=1 (pre-training and SFT bitwise reproducible),
# WORK (everything the run makes; default /tmp/gpu-learn), OUT (figures, logs; default ./out), LABELS
# (default the committed data/labels/spmv-h200.jsonl.gz), EVAL_MATRICES (a folder of .mtx), DEVICE
# (gpu; cpu runs the same steps on the emulator for a smoke test, with SMALL=1 for tiny sizes), and
# the sizes below.
# Prints where each seed's final policy is.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# --- Families. Whole families are held out: no label, SFT or PPO matrix comes from them.
TRAIN_FAMILIES=${TRAIN_FAMILIES:-stencil2d,stencil3d,banded,block_diagonal,fem,random,rmat,circuit,lp,mesh2d,knn,knn_sym,powerlaw}
HELDOUT_FAMILIES=${HELDOUT_FAMILIES:-mesh3d,fem_mesh,road}
# New labels come from these (a family named twice is drawn twice as often): the graph families,
# each in natural, random and bandwidth-reducing order, as often as the classic ones. fem (dense
# blocks, also in random and RCM order) and knn_sym (short uneven rows) are there because the
# held-out fem_mesh and road in random order found nothing like them (H200, 2026-12-05: SFT wrote
# COO and RCSR there, 0.81x and 1.01x where the heuristic's BSR 3x3 and csr_vector gave 1.40x and
# 1.33x). fem three times (since 2026-12-06): with it once, the SFT data held no 3x3 fem matrix in
# random order and 6 BSR 3x3 programs in 684, and one seed of four wrote 2x2 BSR for every fem_mesh
# matrix (H100, docs/benchmarks.md); three times, every greedy program of four seeds on the six
# fem_mesh matrices was the heuristic's 3x3 and the seeds' SFT geomeans differed by 0.026x instead
# of 0.154x (H100, 2026-12-06 08:18, docs/results/learn-h100-2026-12-06c).
# scripts/cpu-sft-proxy.sh labels from the same list: keep the two the same.
LABEL_FAMILIES=${LABEL_FAMILIES:-mesh2d,knn,powerlaw,stencil3d,mesh2d,knn,powerlaw,fem,mesh2d,knn,powerlaw,circuit,stencil2d,rmat,random,banded,block_diagonal,lp,knn_sym,knn_sym,fem,fem}
LABELS_ONLY=${LABELS_ONLY:-0}        # 1: stop after the labels (and their retiming)
RETIME=${RETIME:-0}                  # 1: retime the labels first (step 0b)
RETIME_SECONDS=${RETIME_SECONDS:-300}  # no label started after this; the rest stay as they were
HELDOUT_ORDERS=${HELDOUT_ORDERS:-natural,random,rcm}
HELDOUT_SIZES=${HELDOUT_SIZES:-3}    # matrices per family and order, growing in size
DEVICE=${DEVICE:-gpu}
SMALL=${SMALL:-0}
# --- Sizes (one H200: ~3 minutes a seed after the build; labels extra).
# On an H100 the evaluation takes about twice as long (the first, with tuning, 120-132 s against
# 69 s; 2026-12-05): unless set, 2 samples keep a seed with 24 PPO steps inside one 10-minute call
# (2026-12-06, with SFT_DATA: 428 s cold, 339-353 s on a warm machine; without, step 1b making
# it: 434-462 s cold, 375-409 s warm).
if [[ $DEVICE == gpu ]] && nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H100; then
  EVAL_SAMPLES=${EVAL_SAMPLES:-2} LIMIT_EVAL=${LIMIT_EVAL:-150}
fi
MIN_NNZ=${MIN_NNZ:-1000000}          # PPO's and the held-out matrices: at least this many nonzeros
LABEL_SECONDS=${LABEL_SECONDS:-0}    # > 0: label more matrices first, for about this long
LABEL_CHUNK=${LABEL_CHUNK:-16}       # matrices per `dataset build` (each extends $LABELS)
LABEL_MIN_ROWS=${LABEL_MIN_ROWS:-100000} LABEL_MAX_ROWS=${LABEL_MAX_ROWS:-400000}
MODEL_ARGS=${MODEL_ARGS:---init-hidden 512 --init-layers 8 --init-heads 8 --init-kv-heads 4 --init-intermediate 1536}
MAX_NNZ_EMBED=${MAX_NNZ_EMBED:-128}  # nonzeros the matrix embedding samples
PRETRAIN_STEPS=${PRETRAIN_STEPS:-150}
SFT_STEPS=${SFT_STEPS:-300}
HEURISTIC_LABELS=${HEURISTIC_LABELS:-480}  # SFT samples labelled by the heuristic (0: timed only)
# Their rows: from HEURISTIC_MIN_ROWS, below the timed labels' LABEL_MIN_ROWS. A matrix of
# >= MIN_NNZ nonzeros has fewer than 100k rows when its rows are long (1M at 14.5 a row: 69k), and
# with labels from 100k rows the three held-out mesh3d matrices of 97k rows got the policy's worst
# programs in every seed (H100, 2026-12-06 11:34, learn-h100-2026-12-06d: greedy / heuristic 0.99,
# 0.84, 0.89 in natural / random / RCM order). From 50k rows (58 of 689 samples below 100k): 0.99,
# 0.98, 0.98 there, and 0.990 / 0.989 (SFT / PPO) on all 27 instead of 0.980 / 0.983 (H100, 4 seeds,
# 2026-12-06 15:06, learn-h100-2026-12-06e). The CPU proxy had shown no such effect (one seed,
# docs/results/cpu-sft-proxy-row-range-2026-12-06.txt). HEURISTIC_MIN_ROWS=100000 is the old data.
HEURISTIC_MIN_ROWS=${HEURISTIC_MIN_ROWS:-50000}
# Dense block sizes for block_diagonal and fem in those samples (`dataset build --block-sizes`);
# "" for the families' own (2/4/8, 1..4), where the data held 6 programs of 3x3 blocks and none of
# 5x5 or 6x6. The 4-seed run of 2026-12-06 (H100, docs/benchmarks.md) used this list.
BLOCK_SIZES=${BLOCK_SIZES-2,3,4,5,6,8}
PPO_FROM=${PPO_FROM:-heuristic}      # PPO's matrices: heuristic-labelled ones, or "timed"
# How the PPO matrices are spread (PPO_MATRICES, below): "family_order" (the generator family and
# node order) or "template_rows" (the label's template and its rows' mean length: under 5, 5-12,
# 12 or more).
# With family_order the pool held 4 RCSR matrices of 72 and PPO lowered RCSR lanes=8 on the
# held-out mesh3d in random order (15 a row), where SFT had written it (H100, 2026-12-06 15:06: in
# PPO's rollouts lanes=8 had a mean advantage of -0.24 on rows under 12 and +0.045 on longer ones).
# template_rows: 8 RCSR matrices of 72, half of them long-rowed. Measured (H100, 2026-12-06 17:43,
# 5 seeds): no better. Its rollouts gave lanes=8 +0.069 on long rows, yet PPO still moved mesh3d
# in random order to lanes=2 in 4 of 5 seeds; PPO over SFT -0.003 (family_order: -0.007).
PPO_STRATA=${PPO_STRATA:-family_order}
# PPO_SFT_COEF > 0: every PPO update also descends this times the SFT loss of the SFT data
# (train-ppo --sft-anchor, PPO-ptx), so that what PPO learns on its 72 matrices does not overwrite
# what the labels taught for others (the lanes=2 shift above). 0 (default): off. Measured at 0.5
# (H100, 2026-12-06 20:51, 2 seeds): the anchor's loss stays at 0.001-0.004 (the labels are
# memorised), PPO over SFT -0.004 (without, 9 seeds: -0.005, sd 0.025): no measurable effect.
# PPO_SFT_BATCH SFT examples an update (of 689, 16 of them RCSR lanes=8 on rows of 12 or more).
PPO_SFT_COEF=${PPO_SFT_COEF:-0}
PPO_SFT_BATCH=${PPO_SFT_BATCH:-16}
# DETERMINISTIC=1: pre-training and SFT with `--deterministic`, so that one seed gives the same
# SFT policy in every call and PPO variants run in different calls start from the same policy.
# Without it two runs of one seed differ from step 5 (H100, 2026-12-07, scripts/gpu-determinism.sh:
# 100 SFT steps, losses apart by up to 7e-6, different weights; with it equal bit for bit, at 75% of
# the tokens/s; in learn-h100-2026-12-06g pre-training took 13 s and SFT 73 s, of which 39 s of
# steps, so ~86 s with the flag, inside LIMIT_SFT). PPO and evaluation sample as before (their
# determinism was not measured).
DETERMINISTIC=${DETERMINISTIC:-0}
PPO_STEPS=${PPO_STEPS:-24}
GROUP=${GROUP:-6}                    # --samples-per-task: programs per matrix
# PPO's matrices: a pool of PPO_MATRICES, PPO_BATCH of them a step (x GROUP rollouts), each pass
# over the pool in a new order. With 12 matrices in every step (the earlier recipe) PPO learnt
# those 12 and its gains did not carry to the held-out families (H200, 2026-12-04: paired 0.96-1.05x).
PPO_MATRICES=${PPO_MATRICES:-72}
PPO_BATCH=${PPO_BATCH:-12}
PPO_TEMPERATURE=${PPO_TEMPERATURE:-1.0}
# Nucleus sampling in PPO (docs/benchmarks.md). With literal constants in the templates (H200,
# 2026-12-04) top-p 0.95 made the held-out programs PPO changed slower (paired 0.96-1.00x of SFT)
# and, on 2026-12-06, wrote kR = 4 under a 3x3 FORMAT line (78% correct). With the templates' header
# values taken from the harness macros (H100, 2026-12-06, 4 seeds, lr 1e-5): PPO greedy 99% correct
# and above SFT on the programs it changed in 3 of 4 seeds (paired 0.9998-1.019x, mean 1.012x).
# Top-p 1 was not measured with these templates.
PPO_TOP_P=${PPO_TOP_P:-0.95}
# PPO_HEADER_TEMPERATURE > 0: the program's header (FORMAT, LAUNCH and template lines) drawn at
# this temperature and PPO_HEADER_TOP_P, the source after it at PPO_TEMPERATURE / PPO_TOP_P
# (train-ppo --header-temperature): the groups try other programs, not broken sources (at top-p 1
# over every token 15-36% of the samples did not compile; H100, 2026-12-07). 0: off.
PPO_HEADER_TEMPERATURE=${PPO_HEADER_TEMPERATURE:-0}
PPO_HEADER_TOP_P=${PPO_HEADER_TOP_P:-1}
# PAIRED: a second PPO from each seed's SFT policy in the same call (same SFT policy, same card
# and session for both evaluations), with these settings instead (space-separated, e.g.
# "PPO_TOP_P=1" or "PPO_HEADER_TEMPERATURE=0"; of PPO_TOP_P, PPO_HEADER_TEMPERATURE and
# PPO_HEADER_TOP_P); its logs and evaluations in $out/paired-SETTINGS/ (e.g. paired-top_p-1),
# laid out and summarised like $out (the SFT evaluation copied there).
PAIRED=${PAIRED:-}
# SEEN_EVAL: also judge each seed's SFT and PPO policies on new matrices of the *training* families
# (FAMILY:ORDER,...; generator seeds that no label, SFT or PPO matrix used, >= MIN_NNZ nonzeros):
# whether what PPO learns carries to unseen matrices of the families it trained on, apart from
# whether it carries to unseen families. Evaluations in $out/seen/seed-N/eval-{sft,ppo}/,
# summarised like $out. "" (default): off. E.g. mesh2d:random,knn:random,powerlaw:random,...
SEEN_EVAL=${SEEN_EVAL:-}
PPO_LR=${PPO_LR:-1e-5}               # 2e-5 with 16-rollout updates drifted off SFT (docs/benchmarks.md)
PPO_MINIBATCH=${PPO_MINIBATCH:-36}   # rollouts per update; >= PPO_BATCH x GROUP: one update a step
EVAL_SAMPLES=${EVAL_SAMPLES:-4}
SFT_BATCH=${SFT_BATCH:-16}
MAX_NEW_TOKENS=${MAX_NEW_TOKENS:-1024}  # longest program, in PPO and in evaluation
WORKERS=${WORKERS:-8}
# Stage limits in seconds: a stage over its limit is stopped and the run goes on without it.
LIMIT_PRETRAIN=${LIMIT_PRETRAIN:-60} LIMIT_SFT=${LIMIT_SFT:-110} LIMIT_PPO=${LIMIT_PPO:-240}
LIMIT_EVAL=${LIMIT_EVAL:-120}
LIMIT_LABELS=${LIMIT_LABELS:-$((60 + HEURISTIC_LABELS / 4))}  # step 1b (2 cores: 480 in 270 s)
LIMIT_EVAL_FIRST=${LIMIT_EVAL_FIRST:-240}  # the first evaluation also tunes every held-out matrix
if [[ $SMALL == 1 ]]; then  # a smoke test of every step (CPU): tiny sizes, nothing learnt
  MIN_NNZ=0 HELDOUT_SIZES=1 LABEL_MIN_ROWS=200 HEURISTIC_MIN_ROWS=200 LABEL_MAX_ROWS=400 LABEL_CHUNK=4
  MODEL_ARGS="--init-hidden 64 --init-layers 2 --init-heads 2 --init-kv-heads 1 --init-intermediate 128"
  PRETRAIN_STEPS=2 SFT_STEPS=2 PPO_STEPS=2 GROUP=2 PPO_MATRICES=4 PPO_BATCH=2 EVAL_SAMPLES=2 WORKERS=1
  HEURISTIC_LABELS=$((HEURISTIC_LABELS > 0 ? 8 : 0)) PPO_MINIBATCH=4
  SFT_BATCH=2 MAX_NEW_TOKENS=32 LIMIT_PRETRAIN=300 LIMIT_SFT=300 LIMIT_PPO=300 LIMIT_EVAL=300 LIMIT_EVAL_FIRST=300
fi

seeds=${SEEDS:-${SEED:-1}}
work=${WORK:-/tmp/gpu-learn}
out=${OUT:-$PWD/out}
labels=${LABELS:-$PWD/data/labels/spmv-h200.jsonl.gz}
[[ $PPO_STRATA == family_order || $PPO_STRATA == template_rows ]] ||
  { echo "gpu-learn: PPO_STRATA must be family_order or template_rows, not '$PPO_STRATA'" >&2; exit 2; }
[[ $PPO_SFT_COEF =~ ^[0-9]*\.?[0-9]+$ ]] ||
  { echo "gpu-learn: PPO_SFT_COEF must be a number >= 0, not '$PPO_SFT_COEF'" >&2; exit 2; }
[[ $DETERMINISTIC == 0 || $DETERMINISTIC == 1 ]] ||
  { echo "gpu-learn: DETERMINISTIC must be 0 or 1, not '$DETERMINISTIC'" >&2; exit 2; }
IFS=, read -r -a seen_specs <<<"$SEEN_EVAL"
for spec in "${seen_specs[@]}"; do
  [[ $spec =~ ^([a-z0-9_]+):(natural|random|rcm)$ && ,$TRAIN_FAMILIES, == *,${spec%%:*},* ]] ||
    { echo "gpu-learn: SEEN_EVAL takes FAMILY:ORDER of the training families ($TRAIN_FAMILIES) and natural, random or rcm, not '$spec'" >&2; exit 2; }
done
for setting in $PAIRED; do
  [[ $setting =~ ^(PPO_TOP_P|PPO_HEADER_TEMPERATURE|PPO_HEADER_TOP_P)=[0-9]*\.?[0-9]+$ ]] ||
    { echo "gpu-learn: PAIRED takes PPO_TOP_P=, PPO_HEADER_TEMPERATURE= or PPO_HEADER_TOP_P= with a number, not '$setting'" >&2; exit 2; }
done
[[ $PPO_SFT_BATCH =~ ^[1-9][0-9]*$ ]] ||
  { echo "gpu-learn: PPO_SFT_BATCH must be a whole number >= 1, not '$PPO_SFT_BATCH'" >&2; exit 2; }
mkdir -p "$out" "$work"
bin=$PWD/build-gpu/src/cli/sparserl
[[ $DEVICE == cpu ]] && bin=${BIN:-$PWD/build/src/cli/sparserl}
summary=$out/learn-summary.txt
say() { echo "gpu-learn: $*" | tee -a "$summary"; }
# The device tool brings back 8 files at most: every seed's logs, metrics and evaluations in one.
pack() {
  tar czf "$work/learn-results.tgz" -C "$out" --exclude=check --exclude=learn-results.tgz . &&
    mv "$work/learn-results.tgz" "$out/" && say "everything in $out/learn-results.tgz"
}
# A run cut short (`timeout` sends TERM) still packs what it measured: on 2026-12-05 a run cut in
# PPO brought back only its log, the SFT evaluation's JSON left behind.
running=
ppo_running=()  # POLICY DIR of the PPO stage under way: a run cut in PPO keeps its steps so far
trap '[[ -n $running ]] && kill "$running" 2>/dev/null; say "stopped by a signal: packing what there is"
  ((${#ppo_running[@]})) && keep_ppo_logs "${ppo_running[@]}"; pack; exit 143' TERM INT
# stage NAME LIMIT CMD...: runs CMD under a time limit, its output in $out/NAME.log.
stage() {
  local name=$1 limit=$2 start=$SECONDS rc
  shift 2
  mkdir -p "$(dirname "$out/$name.log")"
  # In the background and waited for: a TERM to this script is then handled at once (the trap),
  # not after the stage's command ends.
  timeout "$limit" "$@" >"$out/$name.log" 2>&1 &
  running=$!
  wait "$running"
  rc=$?
  running=
  say "$name: rc=$rc in $((SECONDS - start)) s (limit $limit s)"
  tail -3 "$out/$name.log" | tee -a "$summary"
  return $rc
}

# On the GPU machine gpu-check.sh builds (incrementally on a warm machine, where build-gpu/ stays
# but the carried packages are unpacked anew) and the binary needs their libraries.
if [[ $DEVICE == gpu ]]; then
  start=$SECONDS
  CTEST_REGEX='^$' GPU_TESTS='^$' TARGETS="sparserl sparserl-gpu-worker sparserl-nvrtc-child" \
    OUT="$out/check" bash scripts/gpu-check.sh >"$out/check.log" 2>&1
  say "build in $((SECONDS - start)) s"
  # The card and its clocks, packed with the results (check/ is not: its logs are large).
  nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv \
    >"$out/gpu.txt" 2>&1
  multiarch=$PWD/.deps/root/usr/lib/x86_64-linux-gnu
  [[ -d $multiarch ]] && export LD_LIBRARY_PATH=$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
[[ -x $bin ]] || { say "no $bin: see $out/check.log"; exit 1; }
say "seeds $seeds, device $DEVICE, work $work, train families $TRAIN_FAMILIES," \
  "held out $HELDOUT_FAMILIES ($HELDOUT_ORDERS), PPO steps $PPO_STEPS, evaluation samples $EVAL_SAMPLES"
t0=$SECONDS

# 0. More labels, in chunks, each extending $labels (a chunk cut short by the time limit is lost,
# the earlier ones are kept). The generator seed follows the number of labels so far.
if ((LABEL_SECONDS > 0)); then
  mkdir -p "$(dirname "$labels")"
  chunk=0
  while ((SECONDS - t0 + 30 < LABEL_SECONDS)); do
    earlier=0 extend=()
    if [[ -f $labels ]]; then
      earlier=$(gzip -cdf "$labels" | wc -l)
      extend=(--extend "$labels")
    fi
    stage "labels-$chunk" $((LABEL_SECONDS - (SECONDS - t0))) "$bin" dataset build \
      --device "$DEVICE" --generate "$LABEL_CHUNK" --families "$LABEL_FAMILIES" \
      --seed $((7919 + earlier)) --min-rows "$LABEL_MIN_ROWS" --max-rows "$LABEL_MAX_ROWS" \
      --max-matrix-nnz 20000 --workers "$WORKERS" --no-progress "${extend[@]}" \
      -o "$work/labels.new.jsonl.gz" || break
    mv "$work/labels.new.jsonl.gz" "$labels"
    chunk=$((chunk + 1))
  done
  say "labels: $(gzip -cdf "$labels" | wc -l) in $labels after $((SECONDS - t0)) s"
  cp "$labels" "$out/labels.jsonl.gz"
fi
[[ -f $labels ]] || { say "no labels in $labels (LABEL_SECONDS=300 makes some)"; exit 1; }
# 0b. The rankings brought up to date. Labels not reached in RETIME_SECONDS stay as they were (the
# summary line counts them): run again with LABELS=out/labels-retimed.jsonl.gz to go on.
if [[ $RETIME == 1 ]]; then
  if stage retime $((RETIME_SECONDS + 120)) "$bin" dataset retime "$labels" --device "$DEVICE" \
    --workers "$WORKERS" --time-limit "$RETIME_SECONDS" --no-progress \
    -o "$work/labels-retimed.jsonl.gz"; then
    labels=$work/labels-retimed.jsonl.gz
    cp "$labels" "$out/labels-retimed.jsonl.gz"
  fi
fi
[[ $LABELS_ONLY == 1 ]] && exit 0

# 1b. The SFT data: the timed labels, extended by heuristic-labelled matrices of the same families
# (--extend keeps every timed sample and labels no matrix twice).
# SFT_DATA: that file made earlier with the same command (e.g. here on the CPU), to save its time.
sft_data=$labels
if [[ -n ${SFT_DATA:-} ]]; then
  sft_data=$SFT_DATA
  say "SFT data: $(gzip -cdf "$sft_data" | wc -l) samples from $sft_data"
elif ((HEURISTIC_LABELS > 0)); then
  sft_data=$work/sft-data.jsonl.gz
  stage heuristic-labels "$LIMIT_LABELS" "$bin" dataset build --device cpu --label heuristic --no-verify \
    --generate "$HEURISTIC_LABELS" --families "$LABEL_FAMILIES" --seed 50021 \
    --min-rows "$HEURISTIC_MIN_ROWS" --max-rows "$LABEL_MAX_ROWS" --max-matrix-nnz 20000 \
    ${BLOCK_SIZES:+--block-sizes "$BLOCK_SIZES"} \
    --extend "$labels" --no-progress -o "$sft_data" || exit 1
fi

# 1. Held-out matrices: every family x order x size, the same for every seed.
start=$SECONDS
held=$work/held-out
rm -rf "$held" && mkdir -p "$held"
IFS=, read -r -a held_fams <<<"$HELDOUT_FAMILIES"
IFS=, read -r -a held_orders <<<"$HELDOUT_ORDERS"
# gen_large FAMILY ORDER SEED ROWS FILE: a .mtx with >= MIN_NNZ nonzeros; when ROWS give too few,
# the rows grow by the shortfall and it is generated again.
gen_large() {
  local family=$1 order=$2 s=$3 rows=$4 file=$5 nnz
  for _ in 1 2 3 4; do
    nnz=$("$bin" matrix gen "$family" --rows "$rows" --order "$order" --seed "$s" -o "$file" |
      sed -n 's/.*, \([0-9]*\) nonzeros.*/\1/p')
    [[ -n $nnz ]] || break
    ((nnz >= MIN_NNZ)) && return 0
    rows=$((rows * MIN_NNZ * 5 / (4 * (nnz > 0 ? nnz : 1)) + 1))
  done
  echo "gen_large: $family did not reach $MIN_NNZ nonzeros" >&2
  rm -f "$file"
  return 1
}
base_rows=100000
[[ $SMALL == 1 ]] && base_rows=300
for f in "${held_fams[@]}"; do
  for o in "${held_orders[@]}"; do
    for ((i = 0; i < HELDOUT_SIZES; ++i)); do
      gen_large "$f" "$o" $((1000 + i)) $((base_rows * (2 + i) / 2)) "$held/$f-$o-$i.mtx" &
    done
  done
  wait  # a family's matrices at once
done
say "held-out matrices: $(find "$held" -name "*.mtx" | wc -l), in $((SECONDS - start)) s"
seen=$work/seen  # SEEN_EVAL's matrices: generator seed 7001, which nothing else uses
rm -f "$work/seen-tuned.json" "$work/extra-tuned.json"  # evaluate_both's, from an earlier run
if ((${#seen_specs[@]})); then
  rm -rf "$seen" && mkdir -p "$seen"
  for spec in "${seen_specs[@]}"; do
    gen_large "${spec%%:*}" "${spec#*:}" 7001 "$base_rows" "$seen/${spec%%:*}-${spec#*:}.mtx" &
  done
  wait
  say "seen-family matrices: $(find "$seen" -name "*.mtx" | wc -l) of ${#seen_specs[@]}"
fi

# 2-3. The corpus and the tokenizer (data, the same for every seed), then each seed's policy.
"$bin" dataset corpus -o "$work/corpus.jsonl" --max-bytes $((4 << 20)) >"$out/corpus.log" 2>&1
rm -rf "$work/tokenizer-texts"
python3 tools/tokenizer_texts.py "$sft_data" "$work/corpus.jsonl" "$work/tokenizer-texts"
"$bin" tokenizer train --corpus "$work/tokenizer-texts" --vocab 8192 -o "$work/tokenizer" \
  >"$out/tokenizer.log" 2>&1 || { say "tokenizer failed: $(tail -1 "$out/tokenizer.log")"; exit 1; }

# BASELINES: an earlier evaluate_policy.json on these held-out matrices (by content) spares the
# first evaluation its tuning.
baselines=()
[[ -n ${BASELINES:-} ]] && baselines=(--baselines "$BASELINES")
evaluate() {  # NAME MODEL MATRICES...: evaluate-policy, its report in $out/NAME/
  local name=$1 model=$2
  shift 2
  local limit=$LIMIT_EVAL
  ((${#baselines[@]} == 0)) && limit=$LIMIT_EVAL_FIRST
  stage "$name/eval" "$limit" "$bin" evaluate-policy --model "$model" --matrices "$@" \
    --samples "$EVAL_SAMPLES" --max-new-tokens "$MAX_NEW_TOKENS" --device "$DEVICE" --workers "$WORKERS" --seed "$seed" \
    "${baselines[@]}" -o "$out/$name"
}
# PPO's matrices (tools/ppo_pool.py): PPO_MATRICES of the SFT data's training split with >= MIN_NNZ
# nonzeros (labelled by the heuristic, or by timing with PPO_FROM=timed), round robin over the
# PPO_STRATA strata; train-ppo draws PPO_BATCH of them a step, every one once a pass. The reward
# curve compares whole passes (learning_summary.py: first and last quarter of the steps, one pass
# each at the defaults), so it shows learning, not which matrices a step drew.
ppo_data=$work/ppo-matrices.jsonl
ppo_count=$(python3 tools/ppo_pool.py "$sft_data" "$ppo_data" --count "$PPO_MATRICES" \
  --min-nnz "$MIN_NNZ" --from "$PPO_FROM" --strata "$PPO_STRATA") || exit 1
say "PPO matrices: $ppo_count, $PPO_BATCH a step (PPO_FROM=$PPO_FROM, PPO_STRATA=$PPO_STRATA, training split, >= $MIN_NNZ nonzeros)"
deterministic=()
[[ $DETERMINISTIC == 1 ]] && deterministic=(--deterministic)
sft_anchor=()
awk -v c="$PPO_SFT_COEF" 'BEGIN { exit !(c > 0) }' &&
  sft_anchor=(--sft-anchor "$sft_data" --sft-coef "$PPO_SFT_COEF" --sft-batch "$PPO_SFT_BATCH")
paired_out=  # PAIRED's folder under $out, when there is a PPO to pair: paired-top_p-1, ...
[[ -n $PAIRED ]] && ((PPO_STEPS > 0)) &&
  paired_out=paired-$(echo "$PAIRED" | tr 'A-Z =' 'a-z_-' | sed 's/ppo_//g')
# keep_ppo_logs POLICY DIR: PPO's metrics and rollouts (both appended a step at a time) into $out/DIR.
keep_ppo_logs() {
  cp "$1/metrics.jsonl" "$out/$2/ppo-metrics.jsonl" 2>/dev/null
  # One line a rollout, ~600 kB a seed; gzip makes it ~10x smaller, for the results that are
  # committed must leave the device tool's working tree under its 64 MiB.
  [[ -f $1/rollouts.jsonl ]] && gzip -n -c "$1/rollouts.jsonl" >"$out/$2/ppo-rollouts.jsonl.gz"
}
# ppo_and_evaluate DIR POLICY [SETTING=VALUE...]: PPO from this seed's SFT policy into POLICY,
# with the PPO_* sampling settings given instead of the run's; its log, metrics, rollouts and
# evaluation in $out/DIR/.
ppo_and_evaluate() {
  local dir=$1 policy=$2 setting PPO_TOP_P=$PPO_TOP_P PPO_HEADER_TEMPERATURE=$PPO_HEADER_TEMPERATURE \
    PPO_HEADER_TOP_P=$PPO_HEADER_TOP_P
  for setting in "${@:3}"; do local "$setting"; done
  ppo_running=("$policy" "$dir")
  ((PPO_STEPS > 0)) && stage "$dir/ppo" "$LIMIT_PPO" "$bin" train-ppo --device "$DEVICE" \
    --model-path "$run/sft/final" --tokenizer-path "$run/sft/final" --data "$ppo_data" \
    --min-nnz "$MIN_NNZ" --max-nnz "$MAX_NNZ_EMBED" --seed "$seed" --steps "$PPO_STEPS" \
    --samples-per-task "$GROUP" --advantage rloo --batch-size "$((PPO_BATCH < ppo_count ? PPO_BATCH : ppo_count))" \
    --mini-batch "$PPO_MINIBATCH" \
    --temperature "$PPO_TEMPERATURE" --top-p "$PPO_TOP_P" \
    --header-temperature "$PPO_HEADER_TEMPERATURE" --header-top-p "$PPO_HEADER_TOP_P" \
    --ppo-epochs 1 --lr "$PPO_LR" --max-new-tokens "$MAX_NEW_TOKENS" --reward-threads 16 --workers "$WORKERS" \
    "${sft_anchor[@]}" --no-progress -o "$policy"
  ppo_running=()
  keep_ppo_logs "$policy" "$dir"
  if [[ -d $policy/final ]]; then
    evaluate "$dir/eval-ppo" "$policy/final" "$held"
    say "$dir: final policy $policy/final"
  else
    say "$dir: no PPO policy (see $out/$dir/ppo.log); final policy $run/sft/final"
  fi
}
# evaluate_both SFT_NAME PPO_NAME MATRICES TUNED: this seed's SFT and PPO policies on MATRICES
# (beside the held-out ones), as evaluate does. Their tuned best is searched once, by the first of
# these evaluations, kept in TUNED and reused by content by every later one, as for the held-out
# matrices.
evaluate_both() {
  local sft_name=$1 ppo_name=$2 matrices=$3 tuned=$4 held_baselines=("${baselines[@]}")
  baselines=()
  [[ -f $tuned ]] && baselines=(--baselines "$tuned")
  evaluate "$sft_name" "$run/sft/final" "$matrices"
  if ((${#baselines[@]} == 0)) && cp "$out/$sft_name/evaluate_policy.json" "$tuned" 2>/dev/null; then
    baselines=(--baselines "$tuned")
  fi
  [[ -d $run/ppo/final ]] && evaluate "$ppo_name" "$run/ppo/final" "$matrices"
  baselines=("${held_baselines[@]}")
}
for seed in $seeds; do
  s0=$SECONDS
  run=$work/seed-$seed
  rm -rf "$run" && mkdir -p "$run"
  # shellcheck disable=SC2086
  stage "seed-$seed/pretrain" "$LIMIT_PRETRAIN" "$bin" pretrain --device "$DEVICE" \
    --corpus "$work/corpus.jsonl" --tokenizer-path "$work/tokenizer" $MODEL_ARGS --seed "$seed" \
    --steps "$PRETRAIN_STEPS" --batch-size 16 --seq-len 512 --lr 1e-3 --no-progress "${deterministic[@]}" \
    -o "$run/pretrain" || continue
  stage "seed-$seed/sft" "$LIMIT_SFT" "$bin" train-sft --device "$DEVICE" --data "$sft_data" \
    --model-path "$run/pretrain/final" --max-nnz "$MAX_NNZ_EMBED" --seed "$seed" \
    --steps "$SFT_STEPS" --batch-size "$SFT_BATCH" --lr 5e-4 --eval-every 50 --no-progress "${deterministic[@]}" \
    -o "$run/sft" || continue
  evaluate "seed-$seed/eval-sft" "$run/sft/final" "$held"
  # Every later evaluation takes this one's tuned best by matrix content instead of searching
  # again. The heuristic's and the tuned best's programs are still timed in each evaluation, so
  # compare each policy with the columns of its own run: re-timing the same 27 programs moved
  # the heuristic's geomean by 1-2% on the H200 and by -0.3% to +1.3% on the H100 (2026-12-06).
  [[ -f $out/seed-$seed/eval-sft/evaluate_policy.json ]] &&
    cp "$out/seed-$seed/eval-sft/evaluate_policy.json" "$work/baselines.json" &&
    baselines=(--baselines "$work/baselines.json")
  cp "$run/sft/metrics.jsonl" "$out/seed-$seed/sft-metrics.jsonl" 2>/dev/null
  ppo_and_evaluate "seed-$seed" "$run/ppo"
  if [[ -n $paired_out ]]; then
    mkdir -p "$out/$paired_out/seed-$seed"
    cp -r "$out/seed-$seed/eval-sft" "$out/seed-$seed/sft-metrics.jsonl" "$out/$paired_out/seed-$seed/" 2>/dev/null
    # shellcheck disable=SC2086  # PAIRED: one word per setting
    ppo_and_evaluate "$paired_out/seed-$seed" "$run/ppo-$paired_out" $PAIRED
  fi
  ((${#seen_specs[@]})) &&
    evaluate_both seen/seed-"$seed"/eval-sft seen/seed-"$seed"/eval-ppo "$seen" "$work/seen-tuned.json"
  [[ -n ${EVAL_MATRICES:-} ]] && evaluate_both seed-"$seed"/eval-sft-extra seed-"$seed"/eval-ppo-extra \
    "$EVAL_MATRICES" "$work/extra-tuned.json"
  say "seed $seed: $((SECONDS - s0)) s"
done
say "recipe in $((SECONDS - t0)) s"
py=python3
python3 -c 'import matplotlib' 2>/dev/null || py=/usr/bin/python3
"$py" tools/learning_summary.py "$out" 2>&1 | tee -a "$summary"
[[ -n $paired_out ]] && "$py" tools/learning_summary.py "$out/$paired_out" 2>&1 | tee -a "$summary"
((${#seen_specs[@]})) && "$py" tools/learning_summary.py "$out/seen" 2>&1 | tee -a "$summary"
trap - TERM INT
pack
