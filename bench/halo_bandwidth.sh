#!/usr/bin/env bash
# Compute-phase bandwidth of every strategy as a ratio of memcpy bandwidth,
# both measured in the same run (this machine is noisy: only ratios taken
# together mean something).
#   bench/halo_bandwidth.sh [NP] [EDGE] [ITFIN]   defaults: 1 rank, 256^3, 40 steps
# The shift kernel reads and writes each interior cell of the three fields
# once per step; that traffic over the compute time is compared with
# memcpy's (bytes read + written) / time on buffers of the same size.
# Target: ratio >= 0.9.
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-1} edge=${2:-256} itfin=${3:-40}
bin=${CHECKMPI_BIN:-build/bin}
[ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found (build first)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=()
mpiexec --version 2>&1 | grep -q "Open MPI" && flags=(--oversubscribe)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpiexec -n "$np" "${flags[@]}" "$bin/checkmpi-halo" --no-input --lx $((edge * np)) --ly "$edge" --lz "$edge" \
  --proc_x "$np" --proc_y 1 --proc_z 1 --itfin "$itfin" --icheck "$itfin" --warmup 2 --strategy all \
  --memcpy-probe --outdir "$out" --json "$out/r.json" >"$out/log" || { cat "$out/log"; exit 1; }
python3 - "$out/r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["config"]
memcpy = doc["probes"]["memcpy_bandwidth"]["mean"]
print(f"# {doc['context']['nprocs']} rank(s), local {c['l']}x{c['m']}x{c['n']}, {c['precision']}, "
      f"{c['itfin']} steps; memcpy {memcpy / 1e9:.2f} GB/s per rank")
print(f"{'strategy':24} {'loop(s)':>9} {'compute(s)':>11} {'GB/s':>7} {'ratio':>6}")
for r in doc["results"]:
    t = r["timers"]["compute"]["mean"]
    bw = r["compute_bytes_per_step"] * r["steps"] / t
    print(f"{r['strategy'] + ' ' + r['alias']:24} {r['timers']['loop']['max']:9.4f} {t:11.4f} "
          f"{bw / 1e9:7.2f} {bw / memcpy:6.2f}")
PY
