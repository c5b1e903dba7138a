#!/usr/bin/env bash
# Sets up everything the tests need (setup.sh --tests), builds with Open MPI
# and with MPICH, and runs the whole test suite
# against both; where set-up found nvcc, also the CUDA build's unit tests, its
# gpu tests (reported skipped without a GPU) and host cases proving that the
# CUDA-enabled binary runs on the host; the sanitizer build's unit tests, a
# subset of its MPI tests, a short run of each fuzz target and
# docs/reliability.md's rows of bounds and outputs; then the
# Python layer's tests (pytest), which include campaigns on a Slurm cluster
# they start on this machine (scripts/slurm-local.sh). Exits non-zero if
# anything fails or no test ran.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests --sanitize
echo "== ctest in build (at ${SECONDS} s)"
(cd build && ctest --output-on-failure --no-tests=error -j "$(nproc)")
# MPICH: everything but the halo validations that vary only what MPI does not
# see (precision, compute mode, self copy, threads) beyond one or two per rank
# count: MPICH's ranks poll without yielding, so on 2 cores each of 4 or 8
# ranks took 35-100 s (8 of them 455 s of CI time); Open MPI runs them all.
echo "== ctest in build-mpich (at ${SECONDS} s)"
(cd build-mpich && ctest --output-on-failure --no-tests=error -j "$(nproc)" -E \
  '^halo_np(2_2x1x1_forward_single_omp2|4_1x2x2_forward_single|4_1x2x2_reverse_double_twopass_selfcopy|4_2x2x1_forward_double_onepass_selfcopy|4_2x2x1_reverse_double|4_2x2x1_reverse_double_twopass_selfcopy|8_2x2x2_reverse_double|8_2x2x2_reverse_double_twopass_selfcopy)$')
if [ -f build-cuda/build.ninja ]; then
  echo "== ctest in build-cuda (unit, gpu, host cases) (at ${SECONDS} s)"
  (cd build-cuda && ctest --output-on-failure --no-tests=error -j "$(nproc)" -L 'unit|gpu' &&
    ctest --output-on-failure --no-tests=error -j "$(nproc)" \
      -R '^(halo_backend|halo_np1_1x1x1_forward_single|halo_np8_2x2x2_reverse_double|p2p_errors_np2)$')
fi
echo "== build-asan: unit tests (one process), MPI subset, fuzz targets (at ${SECONDS} s)"
(cd build-asan && bin/checkmpi_unit_tests --gtest_brief=1 &&
  ctest --output-on-failure --no-tests=error -j "$(nproc)" -R \
    '^(fuzz_.*|halo_np4_2x2x1_forward_single|halo_np2_1x2x1_reverse_double|halo_misroute_np4_axis_x|p2p_pingpong_np2|p2p_datatype_np2|p2p_validate)$')
echo "== build-asan: docs/reliability.md's rows of bounds and outputs (at ${SECONDS} s)"
CHECKMPI_TABLE_BIN=build-asan/bin CHECKMPI_TABLE_SECTION="Bounds and outputs" \
  .venv/bin/python -m pytest -q tests/python/test_bad_inputs.py
echo "== pytest (Python layer, tests/python) (at ${SECONDS} s)"
.venv/bin/python -m pytest --durations=25 tests/python
echo "== all passed (at ${SECONDS} s)"
