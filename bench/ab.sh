#!/usr/bin/env bash
# Two builds of checkmpi-halo against each other, in the same session: each
# round runs A and B with the same options, A first in odd rounds and B first
# in even ones (the second launch of a pair ran 2-4% slower here, whichever
# build it was), and every figure is the median over rounds (this machine is
# noisy: only figures taken together mean something).
#
#   bench/ab.sh BIN_A BIN_B [NP] [EDGE] [ITFIN] [ROUNDS]
#       NP ranks (default 2) on an NPx1x1 grid of EDGE^3 cells each (default
#       128), ITFIN steps (default 60), ROUNDS (default 5)
#
# Printed per strategy: loop and compute time per step (mean over ranks) of A
# and B, B/A for both (the median of each round's ratio), and each build's
# loop time over step2's in the same run. The strategies default to
# step2,step10; CHECKMPI_BENCH_ARGS replaces them (e.g. "--strategy all").
# MPIEXEC (default mpiexec) launches, mpiexec.mpich for MPICH; bench/launcher.sh places the ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
a=$1 b=$2 np=${3:-2} edge=${4:-128} itfin=${5:-60} rounds=${6:-5}
for bin in "$a" "$b"; do
  [ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck source=bench/launcher.sh
source bench/launcher.sh
read -ra flags <<<"$(launcher_flags "$np")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
for r in $(seq "$rounds"); do
  order="A B"
  [ $((r % 2)) -eq 0 ] && order="B A"
  for side in $order; do
    bin=$a
    [ "$side" = B ] && bin=$b
    # shellcheck disable=SC2086
    "$mpiexec" -n "$np" "${flags[@]}" "$bin/checkmpi-halo" --no-input --lx $((edge * np)) --ly "$edge" --lz "$edge" \
      --proc_x "$np" --proc_y 1 --proc_z 1 --itfin "$itfin" --icheck "$itfin" --warmup 3 --outdir "$out/o" \
      --json "$out/$side.$r.json" ${CHECKMPI_BENCH_ARGS:---strategy step2,step10} >"$out/log" 2>&1 \
      || { cat "$out/log"; exit 1; }
  done
done
python3 - "$out" "$rounds" "$a" "$b" <<'PY'
import json, statistics, sys
out, rounds, a, b = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = {s: [json.load(open(f"{out}/{s}.{r}.json")) for r in range(1, rounds + 1)] for s in "AB"}

def per_step(doc):
    t = {r["strategy"]: r for r in doc["results"]}
    return {s: {k: r["timers"][k]["mean"] / r["steps"] for k in ("loop", "compute")} for s, r in t.items()}

A, B = ([per_step(d) for d in runs[s]] for s in "AB")
med = statistics.median
print(f"# A {a}, B {b}: {runs['A'][0]['context']['nprocs']} ranks, {rounds} rounds, ms per step (medians)")
print(f"{'strategy':20} {'loop A':>8} {'loop B':>8} {'B/A':>6} {'comp A':>8} {'comp B':>8} {'B/A':>6} "
      f"{'A/step2':>8} {'B/step2':>8}")
for sid in A[0]:
    m = {k: [med(x[sid][k] for x in side) for side in (A, B)] for k in ("loop", "compute")}
    ratio = {k: med(y[sid][k] / x[sid][k] for x, y in zip(A, B)) for k in ("loop", "compute")}
    vs2 = [med(x[sid]["loop"] / x["step2"]["loop"] for x in side) if "step2" in side[0] else float("nan")
           for side in (A, B)]
    print(f"{sid:20} {m['loop'][0] * 1e3:8.3f} {m['loop'][1] * 1e3:8.3f} {ratio['loop']:6.3f} "
          f"{m['compute'][0] * 1e3:8.3f} {m['compute'][1] * 1e3:8.3f} {ratio['compute']:6.3f} "
          f"{vs2[0]:8.2f} {vs2[1]:8.2f}")
PY
