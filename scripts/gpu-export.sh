#!/usr/bin/env bash
# `sparserl export` on the GPU machine: for every format (SpMV) and every format with SpMM
# programs (not COO, DIA), exports the expert library's program of that format for a matrix that
# suits it, builds examples/export/main.cu around the header with nvcc alone and runs it: the
# example checks every output element against a CPU CSR reference and prints PASS or FAIL (SpMM
# at k = 16 and k = 7).
#
#   scripts/gpu-export.sh     there (the device tool, carry: [".deps"], after
#                             scripts/gpu-check.sh --fetch here)
#
# SPARSERL=path names a built `sparserl` (scripts/gpu-python.sh passes the one it builds);
# without it the `sparserl` target is built into build-gpu with scripts/gpu-check.sh's
# configuration. Logs in $OUT (or ./out): export.txt (the PASS/FAIL lines), export/ (headers,
# builds).
set -uo pipefail
cd "$(dirname "$0")/.."

out=${OUT:-$PWD/out}
mkdir -p "$out"
sparserl=${SPARSERL:-}
if [[ -z $sparserl ]]; then
  # No tests from gpu-check.sh: the regexes match none.
  OUT=$out/export-build TARGETS=sparserl CTEST_REGEX='^no_test$' GPU_TESTS='^no_test$' \
    bash scripts/gpu-check.sh >"$out/export-build.txt" 2>&1
  sparserl=build-gpu/src/cli/sparserl
fi
if [[ ! -x $sparserl ]]; then
  echo "gpu-export: no sparserl binary at $sparserl"
  grep -E 'error|FAILED' "$out/export-build/build.log" 2>/dev/null | head -20
  exit 1
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
capability=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
arch=sm_${capability:-90}

work=$out/export
rm -rf "$work" && mkdir -p "$work"
# Matrices whose expert spaces offer every format: a band (DIA, ELL, SELL, CSR16, ...), FEM
# blocks (BSR) and a power-law graph (COO, HYB).
"$sparserl" matrix gen banded --rows 5000 --bandwidth 6 -o "$work/banded.mtx" >/dev/null &&
  "$sparserl" matrix gen fem --rows 6000 --block 4 -o "$work/fem.mtx" >/dev/null &&
  "$sparserl" matrix gen rmat --rows 4096 -o "$work/rmat.mtx" >/dev/null ||
  { echo "gpu-export: sparserl matrix gen failed"; exit 1; }

failures=0
report() { echo "$*" | tee -a "$out/export.txt"; }
: >"$out/export.txt"
cases=()
for op in spmv spmm; do
  for format in CSR CSR16 COO ELL SELL HYB DIA BSR; do
    [[ $op == spmm && ($format == COO || $format == DIA) ]] && continue
    cases+=("$op $format")
  done
done
# build_case OP FORMAT: export and build one example (all cases at once: nvcc takes ~10 s each).
build_case() {
  local op=$1 format=$2 name=${1}_${2} matrix
  for matrix in banded fem rmat; do
    if "$sparserl" export --matrix "$work/$matrix.mtx" --matrix-format "$format" --op "$op" \
      -o "$work/$name.cuh" >"$work/$name.export.log" 2>&1; then
      echo "$matrix" >"$work/$name.from"
      "$nvcc" -std=c++17 -O2 -arch="$arch" -I"$work" -DSPARSERL_EXPORT_HEADER="\"$name.cuh\"" \
        -o "$work/$name" examples/export/main.cu >"$work/$name.build.log" 2>&1
      return
    fi
  done
}
for c in "${cases[@]}"; do
  # shellcheck disable=SC2086
  build_case $c &
done
wait
for c in "${cases[@]}"; do
  read -r op format <<<"$c"
  name=${op}_${format}
  if [[ ! -f $work/$name.from ]]; then
    report "FAIL $op $format: not exported (export/$name.export.log)"
    failures=$((failures + 1))
    continue
  fi
  exported=$(cat "$work/$name.from")
  if [[ ! -x $work/$name ]]; then
    report "FAIL $op $format: nvcc failed (export/$name.build.log)"
    tail -5 "$work/$name.build.log"
    failures=$((failures + 1))
    continue
  fi
  runs=("")
  [[ $op == spmm ]] && runs=(16 7)
  for k in "${runs[@]}"; do
    # The example's own matrix; the program came from $exported's expert space.
    timeout 120 "$work/$name" ${k:+"$k"} >"$work/$name.run.log" 2>&1 || failures=$((failures + 1))
    report "$op $format${k:+ k=$k}: $(tail -1 "$work/$name.run.log") [program for $exported.mtx]"
  done
done
report "gpu-export: $failures failures"
exit $((failures > 0))
