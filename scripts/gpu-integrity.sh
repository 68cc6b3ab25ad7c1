#!/usr/bin/env bash
# Reward integrity on the GPU (issue 16), with the hostile corpus's programs:
#   1. a memoiser (tests/eval/hostile/memoise_on_input_fingerprint.cu) and its non-memoising twin
#      (good_csr_thread_per_row.cu) on a 1M-row random matrix with ~16M nonzeros: both speed-ups,
#      which must agree within the timing spread (the memoiser never hits: every timed run has a
#      fresh input), and the number of timed runs verified;
#   2. a kernel that turns lazy after 3 launches: judged wrong;
#   3. a spinning kernel (spin_until_flag.cu) with a 1 s limit: judged timeout, and the time from
#      the command's start to its verdict (process start, CUDA and NVRTC included);
#   4. the pool tests (GpuRunnerDevice): among them, the spinning kernel's launch-to-verdict time
#      on a pool and the verdict of a normal program right after it on the same pool, and the
#      checked timed runs' own verification.
# Builds build-gpu/ through scripts/gpu-check.sh first when it has no sparserl there. Output and
# logs go to $OUT (or ./out); the summary is printed and kept in $OUT/integrity.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}
mkdir -p "$out"
say() { echo "gpu-integrity: $*" | tee -a "$out/integrity.txt"; }

if [[ ! -x build-gpu/src/cli/sparserl || ! -x build-gpu/src/eval/gpu_worker/sparserl-gpu-worker ]]; then
  TARGETS="sparserl sparserl-gpu-worker eval_test_gpu_runner" CTEST_REGEX=GpuRunnerDevice \
    GPU_TESTS=GpuRunnerDevice scripts/gpu-check.sh || say "gpu-check.sh reported failures"
else
  cmake --build build-gpu --target sparserl sparserl-gpu-worker eval_test_gpu_runner \
    >"$out/integrity-build.log" 2>&1 || { say "build FAILED (integrity-build.log)"; exit 1; }
fi
sparserl=build-gpu/src/cli/sparserl
hostile=tests/eval/hostile

# One line per verdict: correct, speed-up, timed runs verified, failure.
summary() {
  python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
s = v.get("speedup")
print("correct=%s speedup=%s kernel_ms=%s baseline=%s checked_timed_runs=%s failure=%r" % (
    v["correct"], "%.3f" % s if s is not None else None, v.get("kernel_ms"), v.get("baseline"),
    v.get("checked_timed_runs"), v["failure"]))' "$1"
}

matrix=$out/random_1m.mtx
[[ -f $matrix ]] || $sparserl matrix gen random --rows 1000000 --density 0.000016 --seed 16 \
  -o "$matrix" >"$out/matrix-gen.log" 2>&1 || { say "matrix gen FAILED"; exit 1; }

# 1. Memoiser and twin, twice each (the second pair shows the spread).
for round in 1 2; do
  for p in memoise_on_input_fingerprint good_csr_thread_per_row; do
    $sparserl eval --device gpu --json --matrix "$matrix" --program "$hostile/$p.cu" \
      >"$out/$p.$round.json" 2>"$out/$p.$round.log"
    say "$p (round $round): $(summary "$out/$p.$round.json")"
  done
done

# 2. Lazy from its 4th launch on (the CPU corpus uses LAZY_AFTER 1).
sed 's/^#define LAZY_AFTER 1$/#define LAZY_AFTER 3/' "$hostile/lazy_after_launches.cu" >"$out/lazy_after_3.cu"
$sparserl eval --device gpu --json --matrix "$matrix" --program "$out/lazy_after_3.cu" \
  >"$out/lazy_after_3.json" 2>"$out/lazy_after_3.log"
say "lazy_after_launches (LAZY_AFTER 3): $(summary "$out/lazy_after_3.json")"

# 3. Spinning kernel, limit 1 s per trial.
start=$(date +%s.%N)
$sparserl eval --device gpu --json --timeout 1 --program "$hostile/spin_until_flag.cu" \
  >"$out/spin.json" 2>"$out/spin.log"
end=$(date +%s.%N)
say "spin_until_flag (limit 1 s): $(summary "$out/spin.json")"
say "spin_until_flag: command start to verdict $(python3 -c "print('%.2f' % ($end - $start))") s"

# 4. The pool tests.
build-gpu/tests/eval/eval_test_gpu_runner --gtest_filter='GpuRunnerDevice.*' \
  >"$out/integrity-pool.log" 2>&1
rc=$?
grep -E 'spinning kernel|CSR SpMV|Failure|FAILED|PASSED' "$out/integrity-pool.log" |
  sed 's/^/gpu-integrity: pool: /' | tee -a "$out/integrity.txt"
exit $rc
