#!/usr/bin/env bash
# On the GPU machine: builds model_test_safetensors with -g and runs it under tools/debug/segv_trace.c
# (no gdb there), resolving a crash's backtrace with addr2line; then prints the binary's library
# order. Kept for the next crash that only that machine shows.
export FINAL=$OUT OUT=/tmp/res; mkdir -p $OUT
TARGETS="${DIAG_TARGET:-model_test_safetensors}" CTEST_REGEX='^$' CMAKE_EXTRA="-DCMAKE_CXX_FLAGS=-g" \
  bash scripts/gpu-check.sh > $OUT/check.txt 2>&1
bin=build-gpu/tests/model/${DIAG_TARGET:-model_test_safetensors}
gcc -shared -fPIC -O1 -o /tmp/segv_trace.so tools/debug/segv_trace.c
LD_PRELOAD=/tmp/segv_trace.so $bin ${DIAG_ARGS:-} > $OUT/run.txt 2>&1; echo "rc=$?" >> $OUT/run.txt
grep 'segv_trace: #' $OUT/run.txt | head -25 | while read -r _ _ loc _; do
  mod=${loc%+*}; off=${loc##*+}; echo "$loc -> $(addr2line -f -C -i -e "$mod" "$off" 2>&1 | tr '\n' ' ')"; done >> $OUT/run.txt
readelf -d $bin | grep NEEDED >> $OUT/run.txt 2>&1
cp $OUT/run.txt $OUT/check.txt $FINAL/; grep -E "segv|->|rc=|PASSED|FAILED|NEEDED" $OUT/run.txt | head -40
