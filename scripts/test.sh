#!/usr/bin/env bash
# Runs the whole test suite on the build from scripts/setup.sh: CTest + GoogleTest, then the
# Python package's pytest suite (python/tests/) against the package reinstalled from this tree
# into .venv/ (scripts/python-install.sh; skipped with a BUILD_DIR other than build, or with
# PYTHON_PACKAGE=0). Arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@"
if [[ $build_dir == build && ${PYTHON_PACKAGE:-1} != 0 ]]; then
  t0=$(date +%s)
  bash scripts/python-install.sh
  .venv/bin/python -m pytest -q python/tests
  echo "test: python package installed and tested in $(($(date +%s) - t0)) s"
fi
