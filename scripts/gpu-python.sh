#!/usr/bin/env bash
# sparserl.compile on the GPU machine: builds the Python package's _core module there and runs
# examples/python_compile.py (every expert program for a random matrix, SpMV and SpMM, launched on
# torch CUDA tensors through sparserl.compile and compared with a float64 reference); then the
# C++ side of issue 19, scripts/gpu-export.sh (`sparserl export`'s header for every format, built
# into examples/export/ with nvcc and run; EXPORT=0 leaves it out).
#
#   scripts/gpu-python.sh --fetch   here, with PyPI: nanobind's wheel into .deps/wheels (run
#                                   scripts/gpu-check.sh --fetch too: its .deps/debs)
#   scripts/gpu-python.sh           there (the device tool, carry: [".deps"])
#
# That machine reaches no registry: nanobind (pure Python, its CMake files and sources) comes
# unpacked from the carried wheel. The build is scripts/gpu-check.sh's configuration of build-gpu
# (its -dev packages, torch's prefix) plus -DSPARSERL_PYTHON=ON, limited to the module and the
# helpers; the package runs from a staging copy (build-gpu/python-stage) on PYTHONPATH, its
# helpers from build-gpu. Logs in $OUT (or ./out).
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --fetch ]]; then
  mkdir -p .deps/wheels
  python3 -m pip download -q --no-deps --only-binary=:all: -d .deps/wheels nanobind || exit 1
  echo "gpu-python: $(ls .deps/wheels) in .deps/wheels; carry .deps to the GPU machine"
  exit 0
fi

out=${OUT:-$PWD/out}
mkdir -p "$out"
pylib=$PWD/.deps/pylib
rm -rf "$pylib" && mkdir -p "$pylib"
for wheel in .deps/wheels/nanobind-*.whl; do
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$wheel" "$pylib" || { echo "gpu-python: cannot unpack $wheel (run --fetch here)"; exit 1; }
done
export PYTHONPATH=$pylib

# The carried zlib1g-dev's and libssl-dev's libz.so / libcrypto.so point at runtime libraries
# outside .deps/root, so CMake would take their static .a files, which cannot go into a shared
# module (not -fPIC): the machine's own shared libraries instead.
shared_libs=
for dir in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu; do
  [[ -e $dir/libz.so.1 && -e $dir/libcrypto.so.3 ]] || continue
  shared_libs="-DZLIB_LIBRARY=$dir/libz.so.1 -DZLIB_LIBRARY_RELEASE=$dir/libz.so.1"
  shared_libs+=" -DOPENSSL_CRYPTO_LIBRARY=$dir/libcrypto.so.3"
  break
done
# No tests from gpu-check.sh: the regexes match none.
export_target=sparserl
[[ ${EXPORT:-1} == 0 ]] && export_target=
OUT=$out/build TARGETS="sparserl_python_core sparserl_nvrtc_child sparserl-gpu-worker sparserl_cpu_child $export_target" \
  CTEST_REGEX='^no_test$' GPU_TESTS='^no_test$' \
  CMAKE_EXTRA="-DSPARSERL_PYTHON=ON -DPython_EXECUTABLE=$(command -v python3) $shared_libs ${CMAKE_EXTRA:-}" \
  bash scripts/gpu-check.sh >"$out/gpu-check.txt" 2>&1
module=$(ls build-gpu/python/_core*.so 2>/dev/null | head -1)
if [[ -z $module ]]; then
  echo "gpu-python: the _core module did not build:"; grep -E 'error|FAILED' "$out/build/build.log" | head -30
  tail -20 "$out/gpu-check.txt"; exit 1
fi

stage=build-gpu/python-stage
rm -rf "$stage" && mkdir -p "$stage/sparserl"
cp python/sparserl/*.py "$stage/sparserl/" && cp "$module" "$stage/sparserl/"
# Libraries gpu-check.sh unpacked from the carried packages (libseccomp, ...), when it did.
[[ -d .deps/root/usr/lib/x86_64-linux-gnu ]] &&
  export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$PWD/$stage
python3 examples/python_compile.py 2>&1 | tee "$out/python_compile.txt"
python_rc=${PIPESTATUS[0]}
export_rc=0
if [[ -n $export_target ]]; then
  SPARSERL=build-gpu/src/cli/sparserl OUT=$out bash scripts/gpu-export.sh
  export_rc=$?
fi
exit $((python_rc || export_rc))
