#!/usr/bin/env bash
# Installs what checkmpi needs on Debian/Ubuntu (only what is missing) and
# builds it. Safe to run again.
#   bash scripts/setup.sh             what the main job needs: Open MPI, the
#                                     two executables in build/, and the
#                                     `checkmpi` command in .venv (the quick start)
#   bash scripts/setup.sh --tests     everything the test suite needs as well:
#                                     GoogleTest and MPICH, build/ with its
#                                     tests, build-mpich/ (MPICH), build-cuda/
#                                     (Open MPI, CUDA backend) when nvcc is on
#                                     PATH or in /usr/local/cuda/bin (CUDA is
#                                     not installed here), pytest, Slurm
#                                     with munge for the local cluster the
#                                     campaign tests start (scripts/slurm-local.sh),
#                                     and Chromium, in which the tests look at
#                                     the HTML reports
#   bash scripts/setup.sh --sanitize  also build-asan/ (clang, Open MPI,
#                                     AddressSanitizer + UndefinedBehaviorSanitizer,
#                                     the libFuzzer targets)
#   bash scripts/setup.sh --slurm     only Slurm and munge, for the local
#                                     cluster of scripts/slurm-local.sh: no
#                                     other package, no build, no .venv
set -euo pipefail
cd "$(dirname "$0")/.."
tests=0 sanitize=0 slurm=0
for arg in "$@"; do
  case $arg in
    --tests | --mpich) tests=1 ;;  # --mpich: the name this option had before
    --sanitize) sanitize=1 ;;
    --slurm) slurm=1 ;;
    *) echo "setup: unknown option '$arg' (--tests, --sanitize, --slurm or nothing)" >&2; exit 2 ;;
  esac
done
if [ $slurm -eq 1 ] && [ $tests -eq 1 -o $sanitize -eq 1 ]; then
  echo "setup: --slurm installs Slurm and munge alone; --tests installs them too" >&2
  exit 2
fi

packages=(g++ cmake ninja-build pkg-config libopenmpi-dev openmpi-bin python3 python3-venv)
[ $slurm -eq 0 ] || packages=(slurm-wlm munge)
[ $tests -eq 0 ] || packages+=(mpich libmpich-dev libgtest-dev slurm-wlm munge chromium)
# clang with its sanitizer and libFuzzer run-times (Debian's libclang-rt-dev).
[ $sanitize -eq 0 ] || packages+=(clang libclang-rt-dev libgtest-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ $slurm -eq 1 ]; then
  echo "setup: Slurm and munge are installed; start a cluster here with: bash scripts/slurm-local.sh start"
  exit 0
fi

# The Python layer first: a virtual environment with the checkmpi command
# (and, for the tests, pytest), whose jsonschema the MPI tests use too. pip
# fetches the packages from PyPI the first time only.
extras=""
modules="numpy, matplotlib, rich, jsonschema"
[ $tests -eq 0 ] || extras="[test]" modules="$modules, pytest, xdist, wheel"
if [ ! -x .venv/bin/checkmpi ] || ! .venv/bin/python -c "import $modules" 2>/dev/null; then
  echo "setup: installing the checkmpi Python package into .venv"
  .venv/bin/python -c '' 2>/dev/null || python3 -m venv --clear .venv
  .venv/bin/pip install -q --disable-pip-version-check -e ".$extras"
fi

jobs=$(nproc)
configure() {  # configure DIR [cmake options...]
  local dir=$1
  shift
  mkdir -p "$dir"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; exit 1; }
}
# Open MPI is the default MPI on Debian; name it so the choice does not
# depend on which alternative happens to be selected.
openmpi=(-DMPI_CXX_COMPILER=/usr/bin/mpicxx.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.openmpi)
if [ $sanitize -eq 1 ]; then
  configure build-asan "${openmpi[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCHECKMPI_SANITIZE=ON -DCHECKMPI_FUZZ=ON
  cmake --build build-asan -j "$jobs"
fi
if [ $tests -eq 0 ]; then
  # The two executables only; a build/ that already has its tests keeps them.
  [ -f build/build.ninja ] || configure build "${openmpi[@]}" -DBUILD_TESTING=OFF
  cmake --build build -j "$jobs" --target checkmpi-halo checkmpi-p2p
  exit 0
fi
configure build "${openmpi[@]}" -DBUILD_TESTING=ON
cmake --build build -j "$jobs"
configure build-mpich -DMPI_CXX_COMPILER=/usr/bin/mpicxx.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich
cmake --build build-mpich -j "$jobs"
nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc" ]; then
  configure build-cuda "${openmpi[@]}" -DCHECKMPI_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc"
  cmake --build build-cuda -j "$jobs"
fi
