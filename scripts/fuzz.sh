#!/usr/bin/env bash
# Fuzzes every parser that reads untrusted bytes (fuzz/, docs/security.md): configures build-fuzz
# with clang and -DSPARSERL_FUZZ=ON (libFuzzer + ASan + UBSan on the libraries), builds the
# targets, then runs each for FUZZ_SECONDS (default 60) on a copy of its seed corpus
# (fuzz/corpus/<target>/), as many at once as there are cores. Exits non-zero when a target finds
# anything: the input that triggered it is in build-fuzz/artifacts/<target>/, the report in
# build-fuzz/logs/<target>.log; reproduce with build-fuzz/fuzz/<target> <input>.
#   FUZZ_SECONDS=600 scripts/fuzz.sh            a longer run
#   FUZZ_TARGETS="fuzz_completion" ...          only these targets
#   extra arguments go to cmake's configure step
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${FUZZ_JOBS:-$(nproc)}

# clang and its runtimes (libFuzzer, the sanitizers): not part of scripts/setup.sh's packages.
missing=()
for p in clang libclang-rt-14-dev libomp-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=(); [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

mkdir -p "$build_dir"
if ! CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCUDAToolkit_ROOT=/usr/local/cuda -DSPARSERL_FUZZ=ON -DSPARSERL_BUILD_TESTS=OFF \
  -DSPARSERL_BUILD_BENCH=OFF "$@" >"$build_dir/configure.log" 2>&1; then
  tail -30 "$build_dir/configure.log" >&2
  echo "fuzz: configure failed (all of it in $build_dir/configure.log)" >&2
  exit 1
fi
cmake --build "$build_dir" --target fuzz_targets -j "$(nproc)"

targets=${FUZZ_TARGETS:-$(cd fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//')}
# FUZZ_DEADLINE (seconds since the epoch, .ci/run sets it): shorten each run so that all of them
# end by then, but never below 20 s.
if [[ -n ${FUZZ_DEADLINE:-} ]]; then
  rounds=$((($(wc -w <<<"$targets") + jobs - 1) / jobs))
  fit=$(((FUZZ_DEADLINE - $(date +%s)) / rounds))
  ((fit < seconds)) && seconds=$((fit < 20 ? 20 : fit))
  echo "fuzz: ${seconds} s per target, $jobs at a time, to end by the deadline"
fi
mkdir -p "$build_dir/logs"
run_one() {
  local t=$1 corpus=$build_dir/corpus/$1 artifacts=$build_dir/artifacts/$1/
  mkdir -p "$corpus" "$artifacts"
  for seed in fuzz/corpus/"$t"/*; do  # a local re-run keeps what earlier runs found
    [[ -e $corpus/${seed##*/} ]] || cp "$seed" "$corpus/"
  done
  local dict=()
  [[ -f fuzz/$t.dict ]] && dict=(-dict="fuzz/$t.dict")
  # -timeout: an input that takes 25 s is a finding (a hang; the slowest legitimate inputs take
  # ~1 s, 10 s was hit on a machine loaded 3x over); -rss_limit_mb: so is 2 GiB of memory.
  "$build_dir/fuzz/$t" "${dict[@]}" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" >"$build_dir/logs/$t.log" 2>&1
}
failed=()
declare -A pids
for t in $targets; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  run_one "$t" &
  pids[$t]=$!
done
for t in $targets; do
  if wait "${pids[$t]}"; then status=ok; else status=FINDING; failed+=("$t"); fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build_dir/logs/$t.log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$build_dir/logs/$t.log" | tail -1 | grep -o '[0-9]*' || echo "?")
  echo "fuzz: $t: $status after ${seconds} s, $runs inputs, coverage $cov edges"
done
if ((${#failed[@]})); then
  for t in "${failed[@]}"; do
    echo "fuzz: $t: see $build_dir/logs/$t.log; inputs in $build_dir/artifacts/$t/" >&2
    grep -m 3 -E 'ERROR|fuzz_[a-z_]+: |SUMMARY' "$build_dir/logs/$t.log" >&2 || true
  done
  exit 1
fi
