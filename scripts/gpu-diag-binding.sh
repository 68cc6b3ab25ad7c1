#!/usr/bin/env bash
# On the GPU machine after scripts/gpu-check.sh built build-gpu/: where a crashing test binds
# its libstdc++ symbols (LD_DEBUG=bindings) and a raw backtrace of the crash
# (tools/debug/segv_trace.c; no gdb there). DIAG_BIN / DIAG_ARGS pick the program.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}
mkdir -p "$out"
bin=${DIAG_BIN:-build-gpu/tests/model/model_test_safetensors}
args=${DIAG_ARGS:---gtest_filter=SafetensorsTest.EmptyFileOfNoTensorsIsValid}
gcc -shared -fPIC -O1 -o /tmp/segv_trace.so tools/debug/segv_trace.c
# shellcheck disable=SC2086
LD_PRELOAD=/tmp/segv_trace.so $bin $args >"$out/diag-run.txt" 2>&1
echo "rc=$?" >>"$out/diag-run.txt"
grep 'segv_trace: #' "$out/diag-run.txt" | head -25 | while read -r _ _ loc _; do
  mod=${loc%+*}; off=${loc##*+}
  echo "$loc -> $(addr2line -f -C -i -e "$mod" "$off" 2>&1 | tr '\n' ' ')"
done >>"$out/diag-run.txt"
# shellcheck disable=SC2086
LD_DEBUG=bindings $bin $args 2>&1 | grep -E 'filesystem|remove_all|temp_directory' | head -40 \
  >"$out/diag-bindings.txt"
{ readelf -d "$bin" | grep NEEDED; ldd "$bin"; } >"$out/diag-libs.txt" 2>&1
torch_lib=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')
nm -D --defined-only "$torch_lib"/libtorch*.so "$torch_lib"/libc10*.so 2>/dev/null | c++filt |
  grep -E 'std::filesystem|std::__cxx11::' | head -40 >"$out/diag-torch-exports.txt"
grep -E 'segv|->|rc=' "$out/diag-run.txt" | head -30
head -20 "$out/diag-bindings.txt"
