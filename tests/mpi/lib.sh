# Helpers for the bash test drivers under tests/mpi. ctest sets MPIEXEC,
# MPIEXEC_NUMPROC_FLAG, MPIEXEC_FLAGS and CHECKMPI_BIN (see tests/CMakeLists.txt).
set -euo pipefail

: "${CHECKMPI_BIN:?run through ctest, or set CHECKMPI_BIN}"
: "${MPIEXEC:=mpiexec}"
: "${MPIEXEC_NUMPROC_FLAG:=-n}"
: "${MPIEXEC_FLAGS:=}"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# run_mpi NP CMD...: a job that cannot hang longer than the test's own timeout.
run_mpi() {
  local np=$1
  shift
  # shellcheck disable=SC2086
  timeout --kill-after=10 150 "$MPIEXEC" "$MPIEXEC_NUMPROC_FLAG" "$np" $MPIEXEC_FLAGS "$@"
}

# Everything a test writes lives under one directory removed when it exits
# (set up here, in the test's own shell, so `dir=$(scratch)` works too).
CHECKMPI_TEST_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/checkmpi-test.XXXXXX")
trap 'rm -rf "$CHECKMPI_TEST_ROOT"' EXIT

# A fresh scratch directory under the test's root.
scratch() {
  mktemp -d "$CHECKMPI_TEST_ROOT/run.XXXXXX"
}

# write_input FILE LX LY LZ PX PY PZ ITFIN ICHECK [BORDER]
write_input() {
  cat >"$1" <<NML
&parameters
  lx = $2, ly = $3, lz = $4   ! global size
  proc_x = $5 proc_y = $6 proc_z = $7
  itfin=$8 icheck=$9 border=${10:-10} /
NML
}

# expect_error REGEX ARGS...: runs checkmpi-halo on $np ranks, wants exit 2
# and exactly one "checkmpi-halo: error:" line matching REGEX on stderr.
expect_error() {
  local want=$1
  shift
  local rc=0
  run_mpi "${np:?}" "$CHECKMPI_BIN/checkmpi-halo" "$@" >out.txt 2>err.txt || rc=$?
  [ $rc -eq 2 ] || fail "args [$*]: exit $rc, expected 2 ($(head -c 300 err.txt))"
  local lines
  lines=$(grep -c '^checkmpi-halo: error:' err.txt || true)
  [ "$lines" -eq 1 ] || fail "args [$*]: $lines error lines, expected 1: $(cat err.txt)"
  grep '^checkmpi-halo: error:' err.txt | grep -Eq -- "$want" ||
    fail "args [$*]: message '$(grep '^checkmpi-halo: error:' err.txt)' does not match /$want/"
}
