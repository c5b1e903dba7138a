#!/usr/bin/env bash
# The model against measurements: `checkmpi calibrate` writes this machine's
# profile (the rates that depend on the caches at blocks from 32^3 to 256^3),
# then every strategy runs, with checkmpi-halo's default compute, at each rank
# count and block size, the rank counts and sizes interleaved within each
# round, ROUNDS rounds; the summary prints predicted vs measured per strategy
# and phase (each case's best round, as the profile holds the best of
# calibrate's runs: noise only slows a run down) and how many strategies fall
# within [0.67, 1.5] of the prediction.
#
#   bench/model.sh [ROUNDS] [ITFIN]        default 5 rounds of 50 steps
#
# ITFIN steps at 128^3 per rank; another block runs as many steps as
# `checkmpi calibrate` gives it (as much work, up to 20 times ITFIN on a
# smaller block, down to a fifth on a larger one), so that a few scheduler
# slices cannot move its mean.
#
# Environment: NPS (rank counts, default "1 2"), EDGES (cells per rank along
# each axis, default "32 64 128 256"), MACHINE (an existing profile: skip the
# calibration), CALIBRATE_NP (default the largest of NPS: barriers, copies
# and exchange waits of oversubscribed ranks are measured too), CHECKMPI_BIN
# (default build/bin), PYTHON (default .venv/bin/python), MPIEXEC (default
# mpiexec), KEEP (a folder to keep the runs in), STENCIL (checkmpi-halo's
# options of a stencil for the runs, e.g. "--fields 19 --neighbours 18";
# the calibration stays CheckMPI's).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5} itfin=${2:-50}
bin=${CHECKMPI_BIN:-build/bin}
py=${PYTHON:-.venv/bin/python}
[ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found (build first)" >&2; exit 2; }
launcher=${MPIEXEC:-mpiexec}
flags=()
"$launcher" --version 2>&1 | grep -Eq "Open MPI|OpenRTE" && flags=(--oversubscribe)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CHECKMPI_BIN=$bin
if [ -n "${KEEP:-}" ]; then
  out=$KEEP
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
nps=${NPS:-1 2} edges=${EDGES:-32 64 128 256}
machine=${MACHINE:-}
if [ -z "$machine" ]; then
  cal_np=${CALIBRATE_NP:-$(echo $nps | tr ' ' '\n' | sort -n | tail -1)}
  machine=$out/machine.json
  "$py" -m checkmpi calibrate --np "$cal_np" -o "$machine" >"$out/calibrate.log" 2>&1 ||
    { cat "$out/calibrate.log"; exit 1; }
fi
declare -A steps  # per block edge: as many steps as calibrate's runs at that block
for edge in $edges; do
  steps[$edge]=$("$py" -c "import dataclasses as d, checkmpi.calibrate as c
print(c.halo_steps(d.replace(c.FULL, steps=$itfin), ($edge, $edge, $edge)))")
done
# Every strategy this MPI library runs, in an order shuffled anew each round
# (seeded by the round's number; in $out/order): a slow spell at some point of
# a launch then reaches different strategies in different rounds, and each
# case's best round is not held back by it.
ids=$("$bin/checkmpi-halo" --list-strategies --json - | "$py" -c '
import json, sys
print(" ".join(r["id"] for r in json.load(sys.stdin)["strategies"] if r["unavailable"] is None))')
for r in $(seq "$rounds"); do
  order=$("$py" -c 'import random, sys; ids = sys.argv[2:]; random.Random(int(sys.argv[1])).shuffle(ids)
print(",".join(ids))' "$r" $ids)
  echo "# round $r: $order" >>"$out/order"
  for np in $nps; do
    for edge in $edges; do
      "$launcher" -n "$np" "${flags[@]}" "$bin/checkmpi-halo" --backend host --no-input \
        --local "${edge}x${edge}x${edge}" --itfin "${steps[$edge]}" --icheck "${steps[$edge]}" --warmup 3 \
        --strategy "$order" --memcpy-probe --outdir "$out/o" ${STENCIL:-} \
        --json "$out/np$np-e$edge-r$r.json" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
    done
  done
done
# The package of this checkout, not an installed one.
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "$py" bench/model_summary.py "$machine" -- "$out"/np*-e*-r*.json
