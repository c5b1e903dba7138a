#!/usr/bin/env bash
# Sets up, builds with Open MPI and with MPICH, and runs the whole test suite
# against both, then the Python layer's tests (pytest). Exits non-zero if
# anything fails or no test ran.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --mpich
for dir in build build-mpich; do
  echo "== ctest in $dir"
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j "$(nproc)")
done
echo "== pytest (Python layer, tests/python)"
.venv/bin/python -m pytest tests/python
