#!/usr/bin/env bash
# On the GPU machine: tools/spmv_probe/spmv_probe.cu (kernel variants timed against cuSPARSE
# outside the harness) on suite matrices, to decide which idea deserves an expert template.
#   MATRICES="powerlaw_random circuit" BENCH_ONLY="circuit" scripts/gpu-spmv-probe.sh
# builds sparserl (for the generators), writes each matrix with the suite's spec (seed 2026),
# compiles the probe with nvcc and runs it on each; BENCH_ONLY also runs `sparserl bench --only`
# on those matrices (the harness's view of the same ones), BENCH_SUITE=realistic|classic the
# whole suite (SUITE_LIMIT_S, default 400); GPU_TESTS="regex" also builds the expert templates'
# GPU tests (tests/eval/test_expert_gpu.cpp) and runs those that match, first (ctest-gpu.log).
# Results under $OUT (or ./out): probe.txt (one line per variant), bench-*.json / .log and the
# logs (few files: the device tool returns a limited number).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-$PWD/out}
mkdir -p "$out"
work=${WORK:-/tmp/spmv-probe}
mkdir -p "$work"
say() { echo "gpu-spmv-probe: $*" | tee -a "$out/summary.txt"; }

# The suite specs (src/cli/cmd_bench.cpp), as `matrix gen` arguments.
declare -A spec=(
  [powerlaw_random]="powerlaw --rows 1000000 --avg-degree 16 --exponent 2.3 --order random"
  [powerlaw_natural]="powerlaw --rows 1000000 --avg-degree 16 --exponent 2.3 --order natural"
  [rmat_deg16]="rmat --rows 1048576 --avg-degree 16"
  [random_d12]="random --rows 1000000 --density 0.000012"
  [circuit]="circuit --rows 2000000 --avg-degree 5"
  [lp]="lp --rows 400000 --avg-degree 8"
  [banded_bw24]="banded --rows 600000 --bandwidth 24"
  [road_random]="road --rows 4000000 --order random"
  [mesh2d_random]="mesh2d --rows 1800000 --order random"
  [mesh2d_natural]="mesh2d --rows 1800000 --order natural"
  [knn16_random]="knn --rows 1000000 --dims 3 --neighbors 16 --order random"
  [knn16_natural]="knn --rows 1000000 --dims 3 --neighbors 16 --order natural"
)
matrices=${MATRICES:-powerlaw_random powerlaw_natural rmat_deg16 random_d12 circuit lp}
for m in $matrices; do
  [[ -n ${spec[$m]:-} ]] || { echo "gpu-spmv-probe: unknown matrix '$m' (known: ${!spec[*]})" >&2; exit 2; }
done

start=$SECONDS
gpu_tests=${GPU_TESTS:-'^$'}
targets="sparserl sparserl-gpu-worker sparserl-nvrtc-child"
[[ $gpu_tests == '^$' ]] || targets+=" eval_test_expert_gpu"
CTEST_REGEX=$gpu_tests GPU_TESTS=$gpu_tests TARGETS=$targets \
  OUT="$out/check" bash scripts/gpu-check.sh >"$out/check.log" 2>&1
[[ $gpu_tests == '^$' ]] || cp "$out/check/ctest-gpu.log" "$out/ctest-gpu.log" 2>/dev/null
multiarch=$PWD/.deps/root/usr/lib/x86_64-linux-gnu
[[ -d $multiarch ]] && export LD_LIBRARY_PATH=$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bin=build-gpu/src/cli/sparserl
[[ -x $bin ]] || { say "build failed (check.log)"; exit 1; }
say "build in $((SECONDS - start)) s"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv >"$out/gpu.txt" 2>&1

start=$SECONDS
nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v -o "$work/spmv_probe" tools/spmv_probe/spmv_probe.cu \
  -lcusparse >"$out/nvcc.log" 2>&1 || { say "nvcc failed"; tail -20 "$out/nvcc.log"; exit 1; }
for m in $matrices; do
  # shellcheck disable=SC2086
  "$bin" matrix gen ${spec[$m]} --seed 2026 -o "$work/$m.mtx" >"$work/$m.gen.log" 2>&1 &
done
wait
say "probe compiled and matrices written in $((SECONDS - start)) s"

for m in $matrices; do
  timeout 300 "$work/spmv_probe" "$work/$m.mtx" "$m" 2>&1 | tee -a "$out/probe.txt"
done
rm -rf "${out:?}/check"  # large logs; check.log keeps the build's outcome

for m in ${BENCH_ONLY:-}; do
  suite=classic
  [[ $m == *_natural || $m == *_random || $m == *_rcm ]] && suite=realistic
  mkdir -p "$out/bench-$m"
  timeout 200 "$bin" bench --device gpu --suite "$suite" --only "$m" --workers 8 \
    -o "$out/bench-$m" >"$out/bench-$m/bench.log" 2>&1
  say "bench $m rc=$?: $(grep -E "^$m " "$out/bench-$m/bench.log" | head -1)"
  # Only the JSON comes back (the device tool returns a limited number of files).
  mv "$out/bench-$m/bench.json" "$out/bench-$m.json" 2>/dev/null
  rm -rf "${out:?}/bench-$m"
done
if [[ -n ${BENCH_SUITE:-} ]]; then
  start=$SECONDS
  mkdir -p "$work/bench"
  timeout "${SUITE_LIMIT_S:-400}" "$bin" bench --device gpu --suite "$BENCH_SUITE" --workers 8 \
    -o "$work/bench" >"$out/bench-$BENCH_SUITE.log" 2>&1
  say "bench --suite $BENCH_SUITE rc=$? in $((SECONDS - start)) s: $(grep '^summary' "$out/bench-$BENCH_SUITE.log")"
  cp "$work/bench/bench.json" "$out/bench-$BENCH_SUITE.json" 2>/dev/null
fi
rm -f "$out/nvcc.log"
say "done"
