#!/usr/bin/env bash
# Compute-phase and pack/unpack bandwidth of every strategy, the compute
# phase as a ratio of memcpy bandwidth, all measured in the same run (this
# machine is noisy: only figures taken together mean something).
#   bench/halo_bandwidth.sh [NP] [EDGE] [ITFIN]   defaults: 1 rank, 256^3, 40 steps
# Extra checkmpi-halo options can follow in CHECKMPI_BENCH_ARGS.
#
# The compute phase is credited with the bytes the shift must move: each
# interior cell of the three fields read once and written once per step.
# memcpy is credited the same way (bytes read + written) on buffers of that
# size. Targets: in-place shift (step0-step2) ratio >= 0.9. The two-pass
# kernel of step3-step7 copies the whole fields and then shifts into the
# fields, two copies' traffic, so expect about half of memcpy's ratio (0.5);
# step8/9 the same (interior copy, then shift). step10 writes each cell once
# into the second buffer, but in two sweeps (inner cells, then the border
# shell, whose x faces are short runs at both ends of every row): expect
# between 0.5 and 1 depending on the border.
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-1} edge=${2:-256} itfin=${3:-40}
bin=${CHECKMPI_BIN:-build/bin}
[ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found (build first)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=()
mpiexec --version 2>&1 | grep -Eq "Open MPI|OpenRTE" && flags=(--oversubscribe)
# shellcheck disable=SC2086
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpiexec -n "$np" "${flags[@]}" "$bin/checkmpi-halo" --no-input --lx $((edge * np)) --ly "$edge" --lz "$edge" \
  --proc_x "$np" --proc_y 1 --proc_z 1 --itfin "$itfin" --icheck "$itfin" --warmup 2 --strategy all \
  --memcpy-probe --outdir "$out" --json "$out/r.json" ${CHECKMPI_BENCH_ARGS:-} >"$out/log" || { cat "$out/log"; exit 1; }
python3 - "$out/r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
c, ctx = doc["config"], doc["context"]
memcpy = doc["probes"]["memcpy_bandwidth"]["mean"]
real = 4 if c["precision"] == "single" else 8
l, m, n = c["l"], c["m"], c["n"]
plane = {"x": (m + 2) * (n + 2), "y": (l + 2) * (n + 2), "z": (l + 2) * (m + 2)}
print(f"# {ctx['nprocs']} rank(s), local {l}x{m}x{n}, {c['precision']}, {c['itfin']} steps, "
      f"{ctx.get('omp_threads', 1)} thread(s)/rank; memcpy {memcpy / 1e9:.2f} GB/s per rank")
print(f"{'strategy':24} {'loop(s)':>8} {'compute(s)':>10} {'GB/s':>6} {'ratio':>5}   "
      + " ".join(f"{'pack ' + d:>7} {'unpk ' + d:>7}" for d in "xyz") + "  (pack/unpack GB/s)")
for r in doc["results"]:
    t = r["timers"]
    bw = r["compute_bytes_per_step"] * r["steps"] / t["compute"]["mean"]
    cells = []
    for d in "xyz":
        moved = 2 * 3 * plane[d] * real * r["steps"]  # both signs, three fields, per step
        for phase in ("pack", "unpack"):
            secs = t[f"{phase}_{d}"]["mean"]
            cells.append(f"{moved / secs / 1e9:7.2f}" if secs > 0 else f"{'-':>7}")
    print(f"{r['strategy'] + ' ' + r['alias']:24} {t['loop']['max']:8.4f} {t['compute']['mean']:10.4f} "
          f"{bw / 1e9:6.2f} {bw / memcpy:5.2f}   " + " ".join(cells))
PY
