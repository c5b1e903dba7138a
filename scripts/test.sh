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
# pytest waits on daemons, timers and MPI start-up more than it computes: in one process it took 10 min of CI,
# in three 6. The modules that start a Slurm cluster or emulated nodes (marker `machine`) run one after the
# other in one of them; the rest on two pytest-xdist workers beside it.
echo "== pytest (Python layer, tests/python): the 'machine' modules beside the rest (at ${SECONDS} s)"
tmp=$(mktemp -d)
# A background job ignores SIGINT: it gets it back, so that an interrupt, ours or the terminal's, lets it stop
# its cluster.
(trap - INT; exec .venv/bin/python -m pytest -m machine --basetemp "$tmp/machine" --durations=10 tests/python \
  >"$tmp/machine.log" 2>&1) &
machine=$!
trap 'kill -INT "$machine" 2>/dev/null && wait "$machine"; rm -rf "$tmp"' EXIT
rest=0 ran=0
.venv/bin/python -m pytest -n 2 -m "not machine" --basetemp "$tmp/rest" --durations=25 tests/python || rest=$?
wait "$machine" || ran=$?
echo "== pytest -m machine (at ${SECONDS} s)"
cat "$tmp/machine.log"
if [ "$rest" -ne 0 ] || [ "$ran" -ne 0 ]; then
  echo "== pytest failed: exit $rest (the rest), $ran (the 'machine' modules) (at ${SECONDS} s)"
  exit 1
fi
echo "== all passed (at ${SECONDS} s)"
