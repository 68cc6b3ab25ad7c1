#!/usr/bin/env bash
# Installs the Python package `sparserl` (pyproject.toml, python/) into .venv/ of this checkout,
# creating it when missing: `python3 -m venv --system-site-packages` (PYTHON picks another
# interpreter), the build and test tools from PyPI, then `pip install --no-build-isolation .`,
# which builds in build/ and reuses what scripts/setup.sh built there. Re-running it rebuilds
# what changed and reinstalls (scripts/test.sh does, before pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
if [[ ! -x $venv/bin/python ]]; then
  "${PYTHON:-python3}" -m venv --system-site-packages "$venv"
fi
py=$venv/bin/python
# Only what is missing: each check is an import, so a warm re-run costs no network.
need=()
"$py" -c "import scikit_build_core" 2>/dev/null || need+=("scikit-build-core>=0.10")
"$py" -c "import nanobind" 2>/dev/null || need+=("nanobind>=2.0")
"$py" -c "import numpy" 2>/dev/null || need+=(numpy)
"$py" -c "import scipy" 2>/dev/null || need+=(scipy)
"$py" -c "import pytest" 2>/dev/null || need+=(pytest)
if ((${#need[@]})); then
  "$py" -m pip install -q --disable-pip-version-check "${need[@]}"
fi
# --no-build-isolation: the build tools above, not a fresh temporary copy per install (whose
# nanobind path would change every time and make CMake reconfigure build/).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .
echo "python: sparserl installed into $venv ($("$py" --version))"
