#!/usr/bin/env bash
# watchdog.sh halo|p2p: one rank of a running job is stopped (SIGSTOP); the
# watchdog (--watchdog 3) of every rank that can still report prints one line
# saying where it is and whom it waits for, the job is aborted with exit 1
# within 3 + 10 s, and no rank is left behind.
source "$(dirname "$0")/lib.sh"
tool=$1
dir=$(scratch)
cd "$dir"
seconds=3
if [ "$tool" = halo ]; then
  np=4 victim=2
  cmd=("$CHECKMPI_BIN/checkmpi-halo" --backend host --no-input --lx 16 --ly 16 --lz 8 --itfin 10000000
    --icheck 1000000 --strategy step2 --outdir "$dir/out")
  started='^\[1/[0-9]+\] round 1, .*: step2$'
  want="^checkmpi-halo: watchdog: rank [013] \(.*\): no progress for [0-9]+ s in step2 \(sendrecv-pack\): (routing check|timed loop)(, step [0-9]+)?; waiting for one of its neighbours x [0-9]/[0-9], y [0-9]/[0-9], z [0-9]/[0-9] \(below/above\); aborting the job$"
else
  np=2 victim=1
  cmd=("$CHECKMPI_BIN/checkmpi-p2p" pingpong -m 8:8 -i 20000000 -x 2 --json "$dir/p2p.json")
  started='^  sizes  '
  want="^checkmpi-p2p: watchdog: rank 0 \(.*\): no progress for [0-9]+ s in pingpong, 8 B(, step [0-9]+)?; waiting for rank 1; aborting the job$"
fi
run_mpi "$np" "${cmd[@]}" --watchdog $seconds >out.txt 2>err.txt &
job=$!
for _ in $(seq 300); do grep -Eq "$started" out.txt || ! kill -0 $job 2>/dev/null && break; sleep 0.1; done
grep -Eq "$started" out.txt || fail "the job did not start: $(cat err.txt)"
sleep 1  # well into the measurement
# The ranks are the processes whose command line starts with the tool itself
# (the launcher's starts with the launcher) and names this test's --json or
# --outdir; rank $victim is the one whose launcher told it so (Open MPI's
# OMPI_COMM_WORLD_RANK, Hydra's PMI_RANK): PIDs need not follow the ranks.
pids=$(pgrep -f "^${cmd[0]} .*$dir/" | sort -n)
[ "$(echo "$pids" | wc -l)" -eq $np ] || fail "expected $np ranks, found: $pids"
pid=""
for p in $pids; do
  rank=$(tr '\0' '\n' <"/proc/$p/environ" | sed -n -E 's/^(OMPI_COMM_WORLD_RANK|PMI_RANK)=//p' | head -n 1)
  [ "$rank" != "$victim" ] || pid=$p
done
[ -n "$pid" ] || fail "no rank $victim among $pids (no OMPI_COMM_WORLD_RANK or PMI_RANK in their environment)"
start=$SECONDS
kill -STOP "$pid"
rc=0
wait $job || rc=$?
took=$((SECONDS - start))
kill -KILL "$pid" 2>/dev/null || true
[ $rc -eq 1 ] || fail "exit $rc, expected 1: $(cat err.txt)"
[ $took -le $((seconds + 10)) ] || fail "the job took $took s to end, more than $seconds + 10"
grep -q "watchdog" err.txt || fail "no watchdog line: $(cat err.txt)"
grep "watchdog" err.txt | while read -r line; do
  echo "$line" | grep -Eq "$want" || fail "unexpected watchdog line: $line"
done
left=$(pgrep -f "^${cmd[0]} .*$dir/" || true)
[ -z "$left" ] || fail "ranks left behind: $left"
echo "ok: $tool watchdog ended the job $took s after rank $victim stopped"
