#!/usr/bin/env bash
# One-command set-up on a fresh Debian 12 machine: installs the packages sparserl needs,
# configures and builds everything into build/, then installs the Python package (pip install .,
# which reuses build/) into .venv/. Re-running it is cheap (incremental build).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  libtorch-dev nlohmann-json3-dev libpcre2-dev zlib1g-dev libcli11-dev
  libutf8proc-dev libgtest-dev libgmock-dev libbenchmark-dev libboost-context-dev libomp-dev
  libcpp-httplib-dev libssl-dev libseccomp-dev libgloo-dev python3 python3-matplotlib
  python3-dev python3-venv python3-numpy python3-scipy ccache libopenblas0-openmp
)
# libopenblas0-openmp: Debian's libtorch calls BLAS through libblas.so.3, which is the unoptimised
# reference BLAS unless an optimised one is installed (update-alternatives picks it). On the CPU
# the quickstart's SFT step took 1.1 s with it (65% of the time in its sgemm) and 0.16 s with
# OpenBLAS; the OpenMP build shares libtorch's OpenMP threads instead of adding its own.
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=(); [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[[ -x /usr/local/cuda/bin/nvcc ]] || { echo "setup: error: CUDA toolkit not found at /usr/local/cuda (needed for NVRTC and cuSPARSE headers)" >&2; exit 1; }

build_dir=${BUILD_DIR:-build}
# ccache (installed above) is picked by CMakeLists.txt itself, so `pip install .`, which
# configures build/ again (pyproject.toml), compiles with the same commands.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} -DCUDAToolkit_ROOT=/usr/local/cuda "$@"
cmake --build "$build_dir" -j "$(nproc)"
echo "setup: built into $build_dir (run scripts/test.sh)"

# The Python package (README "Python"): a virtual environment of this checkout, .venv/ (Debian's
# python3 refuses pip installs outside one, PEP 668; one per checkout keeps worktrees apart). It
# sees the system's packages (Debian's numpy and scipy), pip adds the rest from PyPI: the build
# tools scikit-build-core and nanobind, pytest. `pip install .` builds in build/ (pyproject.toml),
# where the libraries are already built: only the two extension modules compile. Not for other
# BUILD_DIRs: the package always builds in build/.
# PYTHON_PACKAGE=0 leaves it out (a machine without PyPI).
if [[ $build_dir == build && ${PYTHON_PACKAGE:-1} != 0 ]]; then
  bash scripts/python-install.sh
fi
