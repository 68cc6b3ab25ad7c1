#!/usr/bin/env bash
# On the GPU machine, after scripts/gpu-check.sh built build-gpu/: the evaluation throughput
# (programs evaluated per second by the worker pool on a 1M-nnz matrix) and the benchmark suite
# (`sparserl bench`: cuSPARSE vs heuristic vs tuned best, plus the copy-bandwidth roofline).
#   OPS="spmv spmm" WORKERS=4 scripts/gpu-bench.sh      results under $OUT (or ./out)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}
mkdir -p "$out"
bin=build-gpu/src/cli/sparserl
workers=${WORKERS:-4}
say() { echo "gpu-bench: $*" | tee -a "$out/bench-summary.txt"; }

# 1. Throughput: the whole expert space on a 1M-nnz random matrix, 8 workers, 8 threads.
"$bin" matrix gen random --rows 100000 --density 1e-4 --seed 3 -o /tmp/random_1m.mtx
for w in 1 8; do
  "$bin" tune --matrix /tmp/random_1m.mtx --device gpu --workers $w --threads $w -o /tmp/best.cu \
    --top 100 >"$out/throughput-w$w.txt" 2>&1
  head -1 "$out/throughput-w$w.txt" | tee -a "$out/bench-summary.txt"
  # Every failing candidate with its reason: with 1 worker all pass, so any failure here is the
  # pool's, not the program's.
  grep -vE ' correct( \[heuristic\])?$' "$out/throughput-w$w.txt" | tail -n +3 | tee -a "$out/bench-summary.txt"
done

# 2. The suite, per op.
for op in ${OPS:-spmv}; do
  mkdir -p "$out/$op"
  say "suite $op"
  "$bin" bench --device gpu --op "$op" --k 64 --workers "$workers" -o "$out/$op" 2>&1 |
    tee "$out/$op/bench.log"
  python3 tools/plot_bench.py "$out/$op/bench.json" "$out/$op/bench.png" || say "plot failed"
done
