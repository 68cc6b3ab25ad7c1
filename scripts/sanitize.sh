#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer: configures build-asan
# with -DSPARSERL_SANITIZE=ON (-fsanitize=address,undefined -fno-sanitize-recover=undefined),
# builds everything CTest runs (not the benchmarks, which it does not run) and runs CTest there.
# Any report fails the test that triggered it. The CPU emulator child is built without sanitizers
# so that its sandbox (seccomp strict mode, fibers, the memory limit) is the real one;
# docs/security.md says why. Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${ASAN_BUILD_DIR:-build-asan}

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT=/usr/local/cuda \
  -DSPARSERL_SANITIZE=ON -DSPARSERL_BUILD_BENCH=OFF "$@"
# SANITIZE_MODULES="sparse kernel text eval": only those tests/<module>/ suites and what they
# link (.ci/run's fallback when CI's time would not hold the whole sanitized build).
read -r -a modules <<<"${SANITIZE_MODULES:-}"
targets=()
for m in "${modules[@]}"; do targets+=(--target "tests/$m/all"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"

# detect_leaks: LeakSanitizer at every test's exit. protect_shadow_gap=0: the CUDA driver maps
# memory where ASan would otherwise protect (GPU workers on a GPU machine). halt_on_error /
# print_stacktrace: one report ends the test, with the stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:protect_shadow_gap=0:check_initialization_order=1:strict_init_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Leaks inside third-party libraries, each with its reproduction (scripts/lsan.supp).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
# SANITIZE_CTEST_ARGS: extra ctest arguments; .ci/run passes "-LE long" (the end-to-end training
# tests, labelled in tests/*/CMakeLists.txt, that the plain suite has just run) to fit CI's budget.
read -r -a ctest_args <<<"${SANITIZE_CTEST_ARGS:-}"
dirs=("$build_dir")
((${#modules[@]})) && dirs=("${modules[@]/#/$build_dir/tests/}")
for d in "${dirs[@]}"; do
  ctest --test-dir "$d" --output-on-failure -j "$(nproc)" "${ctest_args[@]}"
done
