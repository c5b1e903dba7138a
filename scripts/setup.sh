#!/usr/bin/env bash
# Installs what checkmpi needs on Debian/Ubuntu (only what is missing) and
# builds it: build/ with the default MPI (Open MPI), build-mpich/ with MPICH
# when asked (--mpich), build-cuda/ (Open MPI, CUDA backend) when nvcc is on
# PATH or in /usr/local/cuda/bin (CUDA itself is not installed here), and the
# Python layer (the `checkmpi` command) into .venv. --slurm also installs
# Slurm and munge, which the test suite's local Slurm cluster needs
# (scripts/slurm-local.sh). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

mpich=0
slurm=0
for arg in "$@"; do
  case $arg in
    --mpich) mpich=1 ;;
    --slurm) slurm=1 ;;
    *) echo "setup: unknown option '$arg' (known: --mpich, --slurm)" >&2; exit 2 ;;
  esac
done

packages=(g++ cmake ninja-build pkg-config libopenmpi-dev openmpi-bin mpich libmpich-dev libgtest-dev
  python3 python3-venv)
[ "$slurm" -eq 0 ] || packages+=(slurm-wlm munge)
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

jobs=$(nproc)
build() {  # build DIR [cmake options...]
  local dir=$1
  shift
  mkdir -p "$dir"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; exit 1; }
  cmake --build "$dir" -j "$jobs"
}
# Open MPI is the default MPI on Debian; name it so the choice does not
# depend on which alternative happens to be selected.
build build -DMPI_CXX_COMPILER=/usr/bin/mpicxx.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.openmpi
if [ "$mpich" -eq 1 ]; then
  build build-mpich -DMPI_CXX_COMPILER=/usr/bin/mpicxx.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich
fi
nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc" ]; then
  build build-cuda -DMPI_CXX_COMPILER=/usr/bin/mpicxx.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.openmpi \
    -DCHECKMPI_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc"
fi

# The Python layer: a virtual environment with the checkmpi command and its
# test dependencies (pip fetches them from PyPI the first time only).
if [ ! -x .venv/bin/checkmpi ] || ! .venv/bin/python -c 'import numpy, matplotlib, rich, pytest, jsonschema' 2>/dev/null; then
  echo "setup: installing the checkmpi Python package into .venv"
  .venv/bin/python -c '' 2>/dev/null || python3 -m venv --clear .venv
  .venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
fi
