#!/usr/bin/env bash
# p2p_osu_modes.sh: bench/p2p_osu.sh runs one row of coll or rma alone when
# named (coll-bcast: osu_bcast beside coll --op bcast and no other
# collective), and refuses a name it has no row for with exit 2 and one line.
# OSU is a stand-in here: a script printing OSU's table with 2.0 us per size.
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(scratch)
mkdir "$dir/osu"
for prog in osu_bcast osu_allreduce; do
  cat >"$dir/osu/$prog" <<'SH'
#!/bin/sh
[ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 0 ] || exit 0
printf '# OSU MPI Latency Test v7.2\n# Size         Avg Latency(us)\n1                       2.0000\n2                       2.0000\n'
SH
  chmod +x "$dir/osu/$prog"
done
bench() { CHECKMPI_BIN=$CHECKMPI_BIN OSU_DIR=$dir/osu SIZES=1:2 ITERS="-i 20 -x 2" bash "$repo/bench/p2p_osu.sh" "$@"; }
rc=0
bench 2 coll-bcast >"$dir/out.txt" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "coll-bcast: exit $rc: $(tail -5 "$dir/out.txt")"
grep -Eq '^# coll-bcast avg latency \(us\): median p2p/osu [0-9.]+ ' "$dir/out.txt" ||
  fail "coll-bcast: no ratio line: $(cat "$dir/out.txt")"
[ "$(grep -c '^# coll-' "$dir/out.txt")" -eq "$(grep -c '^# coll-bcast' "$dir/out.txt")" ] ||
  fail "coll-bcast ran other collectives: $(grep '^# coll-' "$dir/out.txt")"
for bad in coll-bogus rma-put-bogus; do
  rc=0
  bench 1 "$bad" >"$dir/out.txt" 2>"$dir/err.txt" || rc=$?
  [ "$rc" -eq 2 ] || fail "$bad: exit $rc, expected 2"
  [ "$(cat "$dir/err.txt")" = "bench: unknown mode '$bad'" ] || fail "$bad: stderr '$(cat "$dir/err.txt")'"
done
# rma has rows: without OSU's programs each is skipped, not refused
rc=0
bench 1 rma >"$dir/out.txt" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] || ! grep -q '^# rma-acc-lock-all: no osu_acc_latency under OSU_DIR: skipped' "$dir/out.txt"; then
  fail "rma without OSU's programs: exit $rc: $(cat "$dir/out.txt")"
fi
echo "p2p_osu_modes: ok"
