#!/usr/bin/env bash
# mpmd.sh: two ranks started with different options (an MPMD command line,
# `mpiexec -n 1 TOOL A : -n 1 TOOL B`) are refused at once, on one line, by
# both tools (they used to wait in a collective until the watchdog fired).
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
cd "$dir"
printf '&parameters lx=8 ly=8 lz=8 itfin=4 icheck=2 /\n' >ok.input
halo=("$CHECKMPI_BIN/checkmpi-halo" --input ok.input --outdir o --strategy step2)
p2p=("$CHECKMPI_BIN/checkmpi-p2p" pingpong -m 1:8 -x 1)
want='error: the ranks were started with different options (an MPMD command line?); give every rank the same'
for tool in halo p2p; do
  if [ $tool = halo ]; then a=("${halo[@]}" --itfin 4) b=("${halo[@]}" --itfin 40); else a=("${p2p[@]}" -i 3) b=("${p2p[@]}" -i 30); fi
  rc=0
  start=$SECONDS
  run_mpi 1 "${a[@]}" : "$MPIEXEC_NUMPROC_FLAG" 1 "${b[@]}" >out.txt 2>err.txt || rc=$?
  [ $rc -ne 0 ] || fail "$tool: exit 0 with different options"
  [ $((SECONDS - start)) -lt 30 ] || fail "$tool: took $((SECONDS - start)) s to refuse"
  [ "$(grep -c "^checkmpi-$tool: error:" err.txt)" -eq 1 ] || fail "$tool: not one error line: $(cat err.txt)"
  grep -qF "checkmpi-$tool: $want" err.txt || fail "$tool: $(grep -m1 error: err.txt)"
done
echo "ok: both tools refuse ranks started with different options"
