#!/usr/bin/env bash
# p2p_rma.sh: rma with every synchronisation, put, get and acc,
# three operations per epoch (one: p2p_rma_np2, np4; and here fence and pscw,
# whose one-operation epochs go both ways), validated (-c) at 2 ranks; JSON checked.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
cd "$dir"
p2p="$CHECKMPI_BIN/checkmpi-p2p"
for sync in fence pscw lock lock-all flush; do
  ws=3
  [ "$sync" != fence ] && [ "$sync" != pscw ] || ws="1 3"
  for w in $ws; do
    run_mpi 2 "$p2p" rma --sync "$sync" -W "$w" -m 1:64 -i 3 -x 1 -c --json r.json >out.txt 2>err.txt ||
      fail "rma --sync $sync -W $w: exit $? ($(tail -n 3 err.txt))"
    python3 "$(dirname "$0")/p2p_check.py" r.json rma 2 || fail "rma --sync $sync -W $w: JSON check"
    check_schema r.json
    grep -q "synchronisation $sync, $w operation(s) per epoch" out.txt || fail "rma --sync $sync: no such header"
    [ "$w" != 1 ] || grep -q "per epoch: time per epoch (half of an epoch each way, as OSU)" out.txt ||
      fail "rma --sync $sync -W 1: not said to be OSU's round trip"
    [ "$(grep -c '^# put, synchronisation\|^# get, synchronisation\|^# acc, synchronisation' out.txt)" -eq 3 ] ||
      fail "rma --sync $sync: not one table per operation"
  done
done
echo "ok: rma, every synchronisation"
