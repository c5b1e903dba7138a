#!/usr/bin/env bash
# p2p_gpu.sh NP (ctest label gpu): every mode that has --buffer cuda, on NP
# ranks with device buffers and every message validated (-c): the JSON and
# the header say where the buffers live and how MPI got them (device
# pointers where MPI is CUDA-aware, else staged). Exits 77 (ctest: skipped)
# with the reason when no GPU is visible.
source "$(dirname "$0")/lib.sh"
np=$1
dir=$(scratch)
cd "$dir"
p2p="$CHECKMPI_BIN/checkmpi-p2p"

rc=0
run_mpi 1 "$p2p" self --buffer cuda -m 1:1 -i 1 -x 0 >probe.out 2>probe.err || rc=$?
if [ $rc -eq 2 ] && grep -q 'no CUDA device visible' probe.err; then
  echo "SKIP: $(grep -m1 'error:' probe.err)"
  exit 77
fi
[ $rc -eq 0 ] || fail "cuda probe run: exit $rc: $(cat probe.err)"

for mode in pingpong bw ring loggp datatype self bibw mbw-mr; do
  args=(-m 1:65536 -i 10 -x 2)
  [ $mode != datatype ] || args=(-m 4:16384 -i 10 -x 2)
  run_mpi "$np" "$p2p" $mode --buffer cuda -c --json $mode.json "${args[@]}" >$mode.out 2>$mode.err ||
    fail "$mode --buffer cuda: exit $? ($(tail -n 3 $mode.err))"
  python3 "$(dirname "$0")/p2p_check.py" $mode.json $mode "$np" flat-ok || fail "$mode: JSON check"
  check_schema $mode.json
  python3 - $mode.json <<'PY' || fail "$mode: buffer keys"
import json, sys
cfg = json.load(open(sys.argv[1]))["config"]
assert cfg["buffer"] == "cuda" and cfg["mpi_buffers"] in ("device", "staged"), cfg
assert cfg["gpu"]["device"] >= 0 and cfg["gpu"]["name"], cfg["gpu"]
PY
  grep -Eq '^  GPU         : device [0-9]+ \(.+\) on rank 0; MPI gets (device pointers|pinned host copies)' $mode.out ||
    fail "$mode: no GPU line in the header"
done
echo "ok: --buffer cuda at $np ranks ($(grep -m1 '^  GPU' pingpong.out))"
