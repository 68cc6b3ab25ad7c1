#!/usr/bin/env bash
# The GPU check: on the GPU machine, configure and build into build-gpu/, then run the whole CTest
# suite with the GPU tests active (they skip themselves elsewhere). Logs go to $OUT (or ./out).
#
#   scripts/gpu-check.sh --fetch   on a CPU machine with Debian's registry: download the -dev
#                                  packages into .deps/debs (git-ignored locally) to carry along
#   scripts/gpu-check.sh           on the GPU machine (the device tool, carry: [".deps"])
#
# That machine reaches no package registry and its image lacks some of Debian's -dev packages, so
# whatever is missing comes from the carried .debs, unpacked into .deps/root (never into /) and
# put on CMAKE_PREFIX_PATH / PKG_CONFIG_PATH. Optional: TARGETS="a b" builds only those targets,
# CTEST_REGEX limits the tests, JOBS sets the parallelism.
set -uo pipefail
cd "$(dirname "$0")/.."

debs=(nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
      libbenchmark1debian libpcre2-dev libpcre2-8-0 libutf8proc-dev libutf8proc2 zlib1g-dev
      zlib1g pkgconf pkgconf-bin libpkgconf3 libboost1.74-dev libboost-context1.74-dev
      libboost-context1.74.0 libboost-context-dev
      libcpp-httplib-dev libcpp-httplib0.11 libssl-dev libbrotli-dev libbrotli1
      libseccomp-dev libseccomp2)

if [[ ${1:-} == --fetch ]]; then
  mkdir -p .deps/debs
  grep -qx '/.deps/' .git/info/exclude 2>/dev/null || echo '/.deps/' >>.git/info/exclude
  (cd .deps/debs && apt-get download "${debs[@]}") || exit 1
  echo "gpu-check: $(ls .deps/debs | wc -l) packages in .deps/debs; carry .deps to the GPU machine"
  exit 0
fi

out=${OUT:-$PWD/out}
mkdir -p "$out"
jobs=${JOBS:-$(nproc)}
say() { echo "gpu-check: $*" | tee -a "$out/summary.txt"; }

# 1. What the machine has (kept for the next person planning a run there).
(
  set -x
  uname -a; cat /etc/os-release; nvidia-smi; nproc; free -g
  command -v cmake ninja g++ gcc nvcc python3 pkg-config pkgconf apt-get
  cmake --version; g++ --version; nvcc --version
  ls /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib 2>&1 | grep -E 'cusparse|nvrtc|cudart|stubs'
  ldconfig -p | grep -E 'libcuda\.so|cusparse|nvrtc'
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.utils.cmake_prefix_path)'
  for p in "${debs[@]}"; do dpkg-query -W -f='${Package} ${Version} ${Status}\n' "$p"; done
  ls -d /usr/include/nlohmann /usr/include/CLI /usr/include/gtest /usr/include/benchmark /usr/include/boost
) >"$out/machine.txt" 2>&1

# 2. Dependencies: the system's where it has them, else the carried packages.
have_deps() {
  [[ -f /usr/include/nlohmann/json.hpp && -f /usr/include/CLI/CLI.hpp && -f /usr/include/gtest/gtest.h &&
     -f /usr/include/benchmark/benchmark.h && -f /usr/include/zlib.h &&
     -f /usr/include/boost/context/fiber.hpp && -f /usr/include/httplib.h &&
     -f /usr/include/openssl/evp.h ]] &&
    command -v pkg-config >/dev/null && pkg-config --exists libpcre2-8 libutf8proc libseccomp
}
prefixes=()
if ! have_deps; then
  if [[ -d .deps/debs ]] && ls .deps/debs/*.deb >/dev/null 2>&1; then
    root=$PWD/.deps/root
    rm -rf "$root" && mkdir -p "$root"
    for f in .deps/debs/*.deb; do
      if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$f" "$root"
      else (cd "$root" && ar p "$OLDPWD/$f" "$(ar t "$OLDPWD/$f" | grep '^data\.tar')" | tar -xJf -)
      fi || say "cannot unpack $f"
    done
    # .pc files name prefix=/usr; point them at the unpacked tree.
    find "$root" -name '*.pc' -exec sed -i "s|^prefix=/usr|prefix=$root/usr|" {} +
    multiarch=$root/usr/lib/x86_64-linux-gnu
    export PATH=$root/usr/bin:$PATH
    export LD_LIBRARY_PATH=$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PKG_CONFIG_PATH=$multiarch/pkgconfig:$root/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    command -v pkg-config >/dev/null || export PKG_CONFIG=$root/usr/bin/pkgconf
    prefixes+=("$root/usr")
    say "using $(ls .deps/debs | wc -l) carried packages unpacked in $root"
  elif command -v apt-get >/dev/null && timeout 60 apt-get update -qq; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${debs[@]}" pkg-config \
      >"$out/apt.log" 2>&1 || say "apt-get install failed (see apt.log)"
  else
    say "dependencies missing and neither .deps/debs nor apt-get works: run scripts/gpu-check.sh --fetch on a CPU machine and carry .deps"
  fi
fi

# 3. Configure (torch is not used yet; its prefix is harmless and ready for model/).
torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
[[ -n $torch_prefix ]] && prefixes=("$torch_prefix" "${prefixes[@]}")
prefix_path=$(IFS=';'; echo "${prefixes[*]}")
generator=Ninja
command -v ninja >/dev/null || { generator="Unix Makefiles"; say "ninja not found, using make"; }
extra=()
[[ $(cmake --version | head -1 | grep -oE '[0-9]+' | head -1) -ge 4 ]] && extra+=(-DCMAKE_POLICY_VERSION_MINIMUM=3.5)
[[ -d /usr/local/cuda ]] && extra+=(-DCUDAToolkit_ROOT=/usr/local/cuda)
# CMAKE_EXTRA="-DCMAKE_CXX_FLAGS=-g ..." adds configure arguments (diagnostic builds).
read -ra cmake_extra <<<"${CMAKE_EXTRA:-}"
extra+=("${cmake_extra[@]}")
start=$SECONDS
if ! cmake -S . -B build-gpu -G "$generator" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_PREFIX_PATH="$prefix_path" "${extra[@]}" >"$out/configure.log" 2>&1; then
  say "configure FAILED (configure.log)"; tail -30 "$out/configure.log"; exit 1
fi
say "configured in $((SECONDS - start)) s"

# 4. Build.
start=$SECONDS
targets=()
for t in ${TARGETS:-}; do targets+=(--target "$t"); done
keep_going=(-k 0)
[[ $generator == Ninja ]] || keep_going=(-k)
# Keep going past a broken target, so the tests that did build still run (ctest marks the rest).
if cmake --build build-gpu -j "$jobs" "${targets[@]}" -- "${keep_going[@]}" >"$out/build.log" 2>&1; then
  say "built in $((SECONDS - start)) s"
else
  build_failed=1
  say "build FAILED after $((SECONDS - start)) s (build.log):"
  grep -E 'error|FAILED' "$out/build.log" | head -30 | tee -a "$out/summary.txt"
fi

# The first library a binary needs must be libstdc++ (CMakeLists.txt says why).
first=$(readelf -d build-gpu/src/cli/sparserl 2>/dev/null | grep -m1 NEEDED | grep -o '\[.*\]')
say "sparserl's first needed library: ${first:-?}"

# 5. Test: everything but the GPU tests in parallel, then the GPU tests one at a time (they share
# the device, and the hang tests would skew the others' timings).
start=$SECONDS
regex=${CTEST_REGEX:-.}
gpu_tests=${GPU_TESTS:-'GpuRunnerDevice|hostile_gpu|hostile_mixed'}
ctest --test-dir build-gpu --output-on-failure --timeout 300 -j "$jobs" -R "$regex" \
  -E "$gpu_tests" >"$out/ctest.log" 2>&1
cpu_rc=$?
ctest --test-dir build-gpu --output-on-failure --timeout 300 -V -R "$gpu_tests" \
  >"$out/ctest-gpu.log" 2>&1
gpu_rc=$?
say "tests in $((SECONDS - start)) s: suite rc=$cpu_rc, GPU tests rc=$gpu_rc"
tail -3 "$out/ctest.log" | tee -a "$out/summary.txt"
grep -E 'tests passed|Failed|Skipped|GPU:|gpu:|SpMV|SpMM|bandwidth|OOB' "$out/ctest-gpu.log" | head -60 |
  tee -a "$out/summary.txt"
exit $((cpu_rc || gpu_rc || ${build_failed:-0}))
