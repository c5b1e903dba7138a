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
#   NODES="2 4" bench/model.sh             across emulated nodes (scripts/cluster-local.sh; root)
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
#
# NODES (issue 31): node counts to run across, on as many emulated nodes as the
# largest (scripts/cluster-local.sh start, stopped at the end; refused when a
# cluster is up already), RPN ranks on each (default "1 2"), EDGES default
# "32 64". The calibration runs across the nodes too (`checkmpi calibrate
# --hostfile`: on-node rates on the first node, the off-node link between the
# first two, barriers across them), its blocks the EDGES, its on-node ranks
# CALIBRATE_NP (default as many as take turns on one CPU in the busiest case:
# RPN x nodes per CPU). The tools are copied next to the runs (each node has
# its own /tmp), which lie under /var/tmp unless KEEP says otherwise. RATE
# shapes the node links (cluster-local.sh --rate).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5} itfin=${2:-50}
bin=${CHECKMPI_BIN:-build/bin}
py=${PYTHON:-.venv/bin/python}
[ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found (build first)" >&2; exit 2; }
# shellcheck source=bench/launcher.sh
source bench/launcher.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nodes_list=${NODES:-}
if [ -n "${KEEP:-}" ]; then
  out=$(realpath -m "$KEEP")
  mkdir -p "$out"
else
  out=$(mktemp -d -p "$([ -n "$nodes_list" ] && echo /var/tmp || echo "${TMPDIR:-/tmp}")")
  trap 'rm -rf "$out"' EXIT
fi
nps=${NPS:-1 2} edges=${EDGES:-32 64 128 256}
cases=()  # "np hosts" per case: hosts empty on this node
if [ -n "$nodes_list" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "bench: NODES needs root (network namespaces)" >&2; exit 2; }
  case $out/ in /tmp/* | /dev/shm/*) echo "bench: KEEP '$out' is under /tmp or /dev/shm, which every node has its own of" >&2; exit 2 ;; esac
  edges=${EDGES:-32 64}
  rpns=${RPN:-1 2}
  most=$(echo $nodes_list | tr ' ' '\n' | sort -n | tail -1)
  if ip netns list 2>/dev/null | grep -q '^cmpi-n'; then
    echo "bench: an emulated cluster is up already (scripts/cluster-local.sh status); one at a time" >&2
    exit 2
  fi
  export CHECKMPI_CLUSTER_DIR=$out/cluster
  trap 'bash scripts/cluster-local.sh stop >/dev/null 2>&1 || true; [ -n "${KEEP:-}" ] || rm -rf "$out"' EXIT
  bash scripts/cluster-local.sh start --nodes "$most" ${RATE:+--rate "$RATE"} >"$out/cluster.log" 2>&1 ||
    { cat "$out/cluster.log"; exit 1; }
  set -a
  . "$out/cluster/env"
  set +a
  mkdir -p "$out/bin"
  cp "$bin/checkmpi-halo" "$bin/checkmpi-p2p" "$out/bin/"
  bin=$out/bin
  cpus=$(nproc)
  cal_np=${CALIBRATE_NP:-2}  # at least the on-node ping-pong's two
  for n in $nodes_list; do
    for rpn in $rpns; do
      hosts=$(seq 0 $((n - 1)) | sed "s/^/cmpi-n/; s/\$/:$rpn/" | paste -sd,)
      cases+=("$((n * rpn)) $hosts")
      load=$((rpn * ((n + cpus - 1) / cpus)))
      [ -n "${CALIBRATE_NP:-}" ] || [ "$load" -le "$cal_np" ] || cal_np=$load
    done
  done
  cal_args=(--hostfile "$out/cluster/hostfile" --blocks "$(for e in $edges; do printf '%sx%sx%s,' "$e" "$e" "$e"; done | sed 's/,$//')")
  cal_args+=(--local "$(set -- $edges; echo "${1}x${1}x${1}")")
else
  for np in $nps; do cases+=("$np "); done
  cal_np=${CALIBRATE_NP:-$(echo $nps | tr ' ' '\n' | sort -n | tail -1)}
  cal_args=()
fi
export CHECKMPI_BIN=$bin
machine=${MACHINE:-}
if [ -z "$machine" ]; then
  machine=$out/machine.json
  "$py" -m checkmpi calibrate --np "$cal_np" "${cal_args[@]}" --bin "$bin" -o "$machine" >"$out/calibrate.log" 2>&1 ||
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
  for c in "${cases[@]}"; do
    read -r np hosts <<<"$c"
    place=()
    read -ra flags <<<"$(launcher_flags "$np")"
    name=np$np
    if [ -n "$hosts" ]; then
      place=(--host "$hosts")
      name=np$np-n$(echo "$hosts" | tr ',' '\n' | wc -l)
    fi
    for edge in $edges; do
      "$mpiexec" -n "$np" "${flags[@]}" "${place[@]}" "$bin/checkmpi-halo" --backend host --no-input \
        --local "${edge}x${edge}x${edge}" --itfin "${steps[$edge]}" --icheck "${steps[$edge]}" --warmup 3 \
        --strategy "$order" --memcpy-probe --outdir "$out/o" ${STENCIL:-} \
        --json "$out/$name-e$edge-r$r.json" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
    done
  done
done
# The package of this checkout, not an installed one.
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "$py" bench/model_summary.py "$machine" -- "$out"/np*-e*-r*.json
