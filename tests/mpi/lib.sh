# Helpers for the bash test drivers under tests/mpi. ctest sets MPIEXEC,
# MPIEXEC_NUMPROC_FLAG, MPIEXEC_FLAGS and CHECKMPI_BIN (see tests/CMakeLists.txt).
set -euo pipefail

: "${CHECKMPI_BIN:?run through ctest, or set CHECKMPI_BIN}"
: "${MPIEXEC:=mpiexec}"
: "${MPIEXEC_NUMPROC_FLAG:=-n}"
: "${MPIEXEC_FLAGS:=}"

# check_schema FILE...: the files validate against their JSON Schema (schemas/).
check_schema() {
  "${CHECKMPI_PYTHON:-python3}" "$(dirname "${BASH_SOURCE[0]}")/schema_check.py" "$@" >schema.txt 2>&1 ||
    fail "schema check: $(head -c 600 schema.txt)"
}

# json_holds FILE EXPR: whether the Python expression EXPR holds of the JSON document `doc` in FILE.
json_holds() {
  python3 -c "import json, sys; doc = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"
}

# json_is FILE EXPR: the same, failing the test where it does not.
json_is() {
  json_holds "$1" "$2" || fail "$1: not ($2)"
}

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

# expect_exit CODE PREFIX REGEX NP CMD...: runs CMD on NP ranks (output in
# out.txt and err.txt), wants exit CODE and exactly one stderr line starting
# with PREFIX, that line matching REGEX: bad input is one line, not a hang.
expect_exit() {
  local code=$1 prefix=$2 want=$3 np=$4
  shift 4
  local rc=0 lines
  run_mpi "$np" "$@" >out.txt 2>err.txt || rc=$?
  [ $rc -eq "$code" ] || fail "[$*]: exit $rc, expected $code ($(head -c 400 err.txt))"
  lines=$(grep -c "^$prefix" err.txt || true)
  [ "$lines" -eq 1 ] || fail "[$*]: $lines '$prefix' lines, expected 1: $(cat err.txt)"
  grep "^$prefix" err.txt | grep -Eq -- "$want" ||
    fail "[$*]: '$(grep "^$prefix" err.txt)' does not match /$want/"
}

# expect_usage_error TOOL NP REGEX ARGS...: bad input to TOOL ends with
# exit 2 and one "TOOL: error:" line matching REGEX.
expect_usage_error() {
  local tool=$1 np=$2 want=$3
  shift 3
  expect_exit 2 "$tool: error:" "$want" "$np" "$CHECKMPI_BIN/$tool" "$@"
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

# expect_error REGEX ARGS...: checkmpi-halo ARGS on $np ranks fails with
# exit 2 and one "checkmpi-halo: error:" line matching REGEX.
expect_error() { expect_usage_error checkmpi-halo "${np:?}" "$@"; }
