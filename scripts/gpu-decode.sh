#!/usr/bin/env bash
# On the GPU machine (the device tool, carry [".deps"]): builds the decode benchmark and the live
# parity test against the torch wheel's libtorch, then runs tools/decode_bench.py (a random
# Qwen3-8B-shaped model: transformers' generate() beside ours at batch 1/16/64, same prompts) and
# test_qwen3_live on the model it wrote, the decode-mode test (CUDA graphs vs eager tokens) and
# tools/check_hf_save.py (transformers, and PEFT when installed, load our saved models; hf_save.log).
# Results (decode.json and logs) go to $OUT. DECODE_KEEP=1 leaves the model in $DECODE_WORK/model
# (scripts/gpu-train.sh's 8B PPO step can then use it: PPO8B_MODEL). HF_SAVE_ONLY=1 stops after
# the save checks (no 8B model, no benchmark).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}
mkdir -p "$out"
work=${DECODE_WORK:-/tmp/decode}
TARGETS="bench_decode model_test_qwen3_live model_test_safetensors model_test_decode_step model_test_hf_save sparserl ${EXTRA_TARGETS:-}" CTEST_REGEX='^$' GPU_TESTS='^$' \
  OUT="$out/check" bash scripts/gpu-check.sh >"$out/check.log" 2>&1
cat "$out/check/summary.txt" >>"$out/check.log" 2>/dev/null
./build-gpu/tests/model/model_test_decode_step >"$out/decode_step.log" 2>&1
echo "model_test_decode_step rc=$?" >>"$out/decode_step.log"
# transformers (and PEFT, when installed) read what save_hf_model / save_peft_adapter write.
hfs=/tmp/hf-save && rm -rf "$hfs"
SPARSERL_HF_SAVE_DIR=$hfs ./build-gpu/tests/model/model_test_hf_save --gtest_filter='*export*' \
  >"$out/hf_save.log" 2>&1
has_peft=0
python3 -c 'import peft' 2>/dev/null && has_peft=1
for f in qwen3_gqa qwen3_tied; do
  d=$hfs/$f
  extra=()
  ((has_peft)) && extra=(--peft-base "$d/base" --adapter "$d/adapter")
  python3 tools/check_hf_save.py "$d/merged" "$d/reference.safetensors" "${extra[@]}" \
    >>"$out/hf_save.log" 2>&1
  echo "check_hf_save $f merged rc=$?" >>"$out/hf_save.log"
  python3 tools/check_hf_save.py "$d/plain" "tests/model/fixtures/$f/expected.safetensors" \
    >>"$out/hf_save.log" 2>&1
  echo "check_hf_save $f plain rc=$?" >>"$out/hf_save.log"
done
./build-gpu/tests/model/model_test_safetensors >"$out/safetensors.log" 2>&1
echo "model_test_safetensors rc=$?" >>"$out/safetensors.log"
[[ ${HF_SAVE_ONLY:-0} == 1 ]] && exit 0
python3 tools/decode_bench.py "$work" build-gpu/bench/bench_decode ${DECODE_ARGS:-} >"$out/decode.log" 2>&1
echo "decode_bench rc=$?" >>"$out/decode.log"
cp "$work/decode.json" "$out/" 2>/dev/null
SPARSERL_LIVE_QWEN3_DIR=$work/model ./build-gpu/tests/model/model_test_qwen3_live >"$out/live.log" 2>&1
echo "qwen3_live rc=$?" >>"$out/live.log"
[[ ${DECODE_KEEP:-0} == 1 ]] || rm -rf "$work"
