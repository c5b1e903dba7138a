#!/usr/bin/env bash
# p2p_validate.sh: -c passes on clean runs of every mode, and a payload byte
# damaged before sending (the test-only --inject-corruption) is caught: exit
# 3, one line naming the size and the offset, no hang.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
cd "$dir"
p2p="$CHECKMPI_BIN/checkmpi-p2p"
small=(-i 4 -x 1)

for mode in pingpong bw ring loggp; do
  run_mpi 2 "$p2p" "$mode" -c -m 1:4096 "${small[@]}" --json ok.json >out.txt 2>err.txt ||
    fail "$mode -c on clean data: exit $? ($(cat err.txt))"
  python3 -c 'import json,sys; c=json.load(open("ok.json"))["config"]; sys.exit(0 if c["validate"] is True else 1)' ||
    fail "$mode: config.validate is not true"
  grep -q 'validation on (-c)' out.txt || fail "$mode: header does not say validation is on"
done
run_mpi 2 "$p2p" datatype -c --vectors 1:4:4,8:3:4,16:1:4 "${small[@]}" >out.txt 2>err.txt ||
  fail "datatype -c on clean data: exit $? ($(cat err.txt))"

# expect_corruption REGEX ARGS...: exit 3, exactly one "validation failed"
# line on stderr matching REGEX, and JSON saying so, with no fits and the
# results measured before (payload sizes below the damaged one, except ring,
# whose rings start again from the smallest size).
expect_corruption() {
  local want=$1
  shift
  rm -f bad.json
  expect_exit 3 'checkmpi-p2p: validation failed: ' "$want" 2 "$p2p" "$@" -c "${small[@]}" --json bad.json
  check_schema bad.json
  python3 - "$(grep 'validation failed: ' err.txt)" <<'PY' || fail "args [$*]: JSON of the failed run"
import json, sys
d = json.load(open("bad.json"))
assert d["valid"] is False and "checkmpi-p2p: validation failed: " + d["error"] == sys.argv[1], d["error"]
assert d["fits"] == {}, d["fits"]
bad = int(d["error"].split("size ")[1].split(",")[0])
sizes = [r.get("bytes", r.get("size")) for r in d["results"]]
assert all(s < bad for s in sizes) or d["mode"] == "ring", sizes
PY
}

hex='0x[0-9a-f]{2}'
expect_corruption "size 64, offset 10: expected $hex, got $hex \(rank [01] from rank [01], iteration 0\)$" \
  pingpong -m 1:256 --inject-corruption 64:10
# bw: only rank 0 sends data, so rank 1 sees it.
expect_corruption "size 4096, offset 4095: expected $hex, got $hex \(rank 1 from rank 0, iteration 0\)$" \
  bw -m 1024:8192 --inject-corruption 4096:4095
expect_corruption "size 8, offset 0: .*\(rank [01] from rank [01], iteration 0\)$" \
  ring -m 1:16 --inject-corruption 8:0
expect_corruption "size 128, offset 127: " loggp -m 64:256 --inject-corruption 128:127
# Offsets count payload bytes in packed order: (8,3,4) floats, offset 13 is
# in the second block.
expect_corruption "count 8, blocklen 3, stride 4: size 96, offset 13: " \
  datatype --vectors 1:4:4,8:3:4 --inject-corruption 96:13

# The OSU counterparts (issue 33): bibw's ranks both send (and both damage
# their first window), mbw-mr's receivers check, coll's operations name
# themselves, rma's target checks put and acc, its origin get; pingpong
# --threads names the thread.
expect_corruption "size 256, offset 7: expected $hex, got $hex \(rank [01] from rank [01], iteration 0\)$" \
  bibw -m 64:512 -W 2 --inject-corruption 256:7
expect_corruption "size 256, offset 7: expected $hex, got $hex \(rank 1 from rank 0, iteration 0\)$" \
  mbw-mr -m 64:512 -W 2 --inject-corruption 256:7
expect_corruption "^checkmpi-p2p: validation failed: allgather: size 64, offset 10: .*\(rank [01] from rank 0, iteration 0\)$" \
  coll --op allgather -m 16:128 --inject-corruption 64:10
expect_corruption "^checkmpi-p2p: validation failed: reduce-scatter: size 64, element [0-9]+: " \
  coll --op reduce-scatter -m 16:128 --inject-corruption 64:10
# coll runs the blocking calls and names them so (it said iallreduce, ialltoall, ibcast).
expect_corruption "^checkmpi-p2p: validation failed: allreduce: size 64, element [0-9]+: " \
  coll --op allreduce -m 16:128 --inject-corruption 64:10
expect_corruption "^checkmpi-p2p: validation failed: alltoall: size 64, offset 10: " \
  coll --op alltoall -m 16:128 --inject-corruption 64:10
for op in put acc; do
  expect_corruption "$op: size 32, offset 3: expected $hex, got $hex \(rank 1 from rank 0, iteration 0\)$" \
    rma --op $op --sync fence -W 2 -m 8:64 --inject-corruption 32:3
done
expect_corruption "get: size 32, offset 3: expected $hex, got $hex \(rank 0 from rank 1, iteration 0\)$" \
  rma --op get --sync lock -m 8:64 --inject-corruption 32:3
# One operation per epoch with fence or pscw: OSU's round trips, both ranks operate and check.
expect_corruption "put: size 32, offset 3: expected $hex, got $hex \(rank 1 from rank 0, iteration 0\)$" \
  rma --op put --sync fence -m 8:64 --inject-corruption 32:3
expect_corruption "get: size 32, offset 3: expected $hex, got $hex \(rank 0 from rank 1, iteration 0\)$" \
  rma --op get --sync pscw -m 8:64 --inject-corruption 32:3
expect_corruption "thread [01]: size 64, offset 10: expected $hex, got $hex \(rank [01] from rank [01], iteration 0\)$" \
  pingpong --threads 2 -m 16:128 --inject-corruption 64:10

# Without -c the damage goes unnoticed (the check is what catches it).
run_mpi 2 "$p2p" pingpong -m 1:256 "${small[@]}" --inject-corruption 64:10 >out.txt 2>err.txt ||
  fail "corruption without -c should not fail the run: $(cat err.txt)"
echo "ok: validation"
