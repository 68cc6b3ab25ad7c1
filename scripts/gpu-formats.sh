#!/usr/bin/env bash
# The new formats of issue 18 on the GPU, in one device call of under 5 minutes:
#   1. build build-gpu/ through scripts/gpu-check.sh (only the targets needed) and run the GPU test
#      tests/eval/test_expert_gpu.cpp: every CSR16 and BSR (detected block shape) configuration
#      the expert spaces offer, and the heuristic's pick, through the real harness on FEM meshes
#      (3 and 6 dof per node) and a mesh, SpMV and SpMM, and every RCSR configuration on a mesh
#      and a kNN graph in random order (plus an RCSR program without its gather, judged wrong);
#      each must be correct;
#   2. `sparserl bench --suite realistic --only ...` (SpMV): the whole tuned space, now with CSR16
#      and BSR 3x3 / 6x6, against the fastest cuSPARSE algorithm on realistic-suite matrices;
#   3. per matrix, the best CSR16 and the best BSR candidate next to cuSPARSE, the tuned best and
#      the heuristic (formats.json / formats.txt, tools/formats_report.py over the bench.json's).
#
#   scripts/gpu-formats.sh          on the GPU machine (device tool, carry [".deps"]); results in
#                                   $OUT (or ./out): formats-summary.txt, formats.txt,
#                                   formats.json, bench/<matrix>/bench.json, gpu-test-verdicts.txt,
#                                   and gpu-check.sh's summary.txt, build.log, ctest-gpu.log
# MATRICES overrides the bench's matrices (comma-separated suite names), BENCH_LIMIT_S its time
# limit (all matrices together), WORKERS its GPU workers. CPU dry run of steps 2-3 on a built
# tree: SKIP_BUILD=1 SPARSERL=build/src/cli/sparserl DEVICE=cpu SCALE=100 scripts/gpu-formats.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}
mkdir -p "$out"
start_all=$SECONDS
say() { echo "gpu-formats: $*" | tee -a "$out/formats-summary.txt"; }
matrices=${MATRICES:-fem2d_dof3_natural,fem2d_dof3_random,fem3d_dof3_rcm,fem2d_dof6_natural,mesh2d_rcm,knn16_natural}
bench_limit_s=${BENCH_LIMIT_S:-130}
device=${DEVICE:-gpu}

# 1. Build and the GPU test (gpu-check.sh: configure, build the targets, run the matching tests;
#    the GPU test runs on its own, verbose, so its "GPU:" lines reach summary.txt).
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  TARGETS="sparserl sparserl-gpu-worker sparserl_nvrtc_child eval_test_expert_gpu" \
    CTEST_REGEX=GpuExpertDevice GPU_TESTS=GpuExpertDevice scripts/gpu-check.sh ||
    say "gpu-check.sh reported failures (summary.txt, build.log, ctest-gpu.log)"
fi
bin=${SPARSERL:-build-gpu/src/cli/sparserl}
[[ -x $bin ]] || { say "no $bin: the build failed"; exit 1; }
say "build and GPU test done at $((SECONDS - start_all)) s"
grep -oE 'GPU: .* \| .*' "$out/ctest-gpu.log" 2>/dev/null >"$out/gpu-test-verdicts.txt"
say "GPU test: $(grep -c '| correct |' "$out/gpu-test-verdicts.txt") correct of $(wc -l <"$out/gpu-test-verdicts.txt") programs; $(grep -E 'tests passed|FAILED|Skipped' "$out/ctest-gpu.log" 2>/dev/null | head -3 | tr '\n' ' ')"

# 2. The realistic-suite matrices, tuned, against cuSPARSE: one bench call per matrix, so every
#    finished matrix keeps its bench.json when the time runs out; a matrix is started only while
#    at least 25 s of the budget are left.
scale=()
[[ -n ${SCALE:-} ]] && scale=(--scale "$SCALE")
bench_start=$SECONDS
jsons=()
for m in ${matrices//,/ }; do
  left=$((bench_limit_s - (SECONDS - bench_start)))
  if ((left < 25)); then say "bench: no time left for $m"; continue; fi
  mkdir -p "$out/bench/$m"
  timeout "$left" "$bin" bench --suite realistic --only "$m" --device "$device" --op spmv \
    --workers "${WORKERS:-4}" "${scale[@]}" -o "$out/bench/$m" >"$out/bench/$m/bench.log" 2>&1
  rc=$?
  if [[ -f $out/bench/$m/bench.json ]]; then
    jsons+=("$out/bench/$m/bench.json")
    say "bench $m: $(grep -E '^\S+ +nnz' "$out/bench/$m/bench.log" | head -1)"
  else
    say "bench $m: rc=$rc, no bench.json ($(tail -2 "$out/bench/$m/bench.log" | tr '\n' ' '))"
  fi
done
say "bench done at $((SECONDS - start_all)) s"

# 3. The new formats' best candidates per matrix.
if ((${#jsons[@]})); then
  python3 tools/formats_report.py "$out/formats.json" "${jsons[@]}" | tee "$out/formats.txt" ||
    say "formats report failed"
else
  say "no bench.json at all: see bench/*/bench.log"
fi
say "total $((SECONDS - start_all)) s"
