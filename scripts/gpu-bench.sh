#!/usr/bin/env bash
# On the GPU machine, after scripts/gpu-check.sh built build-gpu/: the evaluation throughput
# (programs evaluated per second by the worker pool on a 1M-nnz matrix), the benchmark suite
# (`sparserl bench`: cuSPARSE vs heuristic vs tuned best, plus the copy-bandwidth roofline) and the
# reward service's load test with GPU workers.
#   THROUGHPUT_WORKERS="1 8 16" OPS="spmv spmm" WORKERS=4 SUITE_LIMIT_S=300 LOAD_TEST=1 \
#     SUSTAINED=1 scripts/gpu-bench.sh                             results under $OUT (or ./out)
# SUSTAINED=1 adds bench/bench_eval_throughput: the same evaluation on a warm pool, 128 distinct
# programs per worker count (start-up, baseline and inputs left out), sustained.json.
# Empty THROUGHPUT_WORKERS or OPS skip those parts; BENCH_ARGS adds bench options (e.g.
# "--only circuit,lp", or "--suite realistic" for the graph families of docs/matrix-families.md);
# SUITE_LIMIT_S bounds each suite (what it had
# measured by then stays in its bench.json, marked "complete": false, and its bench.log).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}
mkdir -p "$out"
bin=build-gpu/src/cli/sparserl
workers=${WORKERS:-4}
throughput_workers=${THROUGHPUT_WORKERS-1 8 16}
suite_limit_s=${SUITE_LIMIT_S:-540}
say() { echo "gpu-bench: $*" | tee -a "$out/bench-summary.txt"; }

# 1. Throughput: the whole expert space on a 1M-nnz random matrix, W workers and W threads.
if [[ -n $throughput_workers ]]; then
  "$bin" matrix gen random --rows 100000 --density 1e-4 --seed 3 -o /tmp/random_1m.mtx
  for w in $throughput_workers; do
    "$bin" tune --matrix /tmp/random_1m.mtx --device gpu --workers "$w" --threads "$w" \
      -o /tmp/best.cu --top 100 >"$out/throughput-w$w.txt" 2>&1
    head -1 "$out/throughput-w$w.txt" | tee -a "$out/bench-summary.txt"
    # Every failing candidate with its reason: with 1 worker all pass, so any failure here is the
    # pool's, not the program's.
    grep -vE ' correct( \[heuristic\])?$' "$out/throughput-w$w.txt" | tail -n +3 |
      tee -a "$out/bench-summary.txt"
  done
fi

# 1b. Sustained throughput on a warm pool.
if [[ ${SUSTAINED:-0} == 1 ]]; then
  build-gpu/bench/bench_eval_throughput --benchmark_format=json >"$out/sustained.json" \
    2>"$out/sustained.log"
  say "sustained throughput rc=$?: $(grep -o '"programs_per_s": [0-9.]*' "$out/sustained.json" |
    tr '\n' ' ')"
fi

# 2. The suite, per op.
for op in ${OPS-spmv spmm}; do
  mkdir -p "$out/$op"
  say "suite $op"
  # shellcheck disable=SC2086
  timeout "$suite_limit_s" "$bin" bench --device gpu --op "$op" --k 64 --workers "$workers" ${BENCH_ARGS:-} \
    -o "$out/$op" 2>&1 | tee "$out/$op/bench.log"
  [[ ${PIPESTATUS[0]} -eq 124 ]] && say "suite $op cut at $suite_limit_s s"
  [[ -f $out/$op/bench.json ]] &&
    { python3 tools/plot_bench.py "$out/$op/bench.json" "$out/$op/bench.png" || say "plot failed"; }
done

# 3. The reward service under load, GPU workers.
if [[ ${LOAD_TEST:-0} == 1 ]]; then
  python3 tools/serve_load_test.py --sparserl "$bin" --device gpu --workers 8 --concurrency 16 \
    --requests 2000 --time-limit 30 >"$out/load-test-gpu.txt" 2>&1
  say "load test rc=$? $(tail -3 "$out/load-test-gpu.txt" | tr '\n' ' ')"
fi

# The device tool brings back 8 files at most: the suites' bench.json / csv / log / png in one.
tar czf /tmp/bench-results.tgz -C "$out" --exclude=bench-results.tgz . &&
  mv /tmp/bench-results.tgz "$out/" && say "everything in $out/bench-results.tgz"
