#!/usr/bin/env bash
# GPU bench: every strategy on the cuda backend, 256^3 on one rank and 128^3
# per rank on 8 ranks (2x2x2, sharing the node's GPUs), all measured in the
# same runs as a device-to-device cudaMemcpy (--memcpy-probe). Prints per
# strategy the compute kernels' bandwidth as a ratio of that memcpy (target
# >= 0.8), pack and unpack time per direction, and, where MPI is CUDA-aware,
# the 8-rank time per step with device buffers against --stage.
#   bench/gpu.sh [ITFIN] [EDGE1] [EDGE8]   defaults: 100 steps (plus 5 warm-up),
#                                          256^3 on one rank, 128^3 per rank on 8;
#                                          an edge of 0 leaves that run out
# CHECKMPI_BIN (default build-cuda/bin) and MPIEXEC (default mpiexec) choose
# the binary and launcher; extra checkmpi-halo options go in CHECKMPI_BENCH_ARGS.
#
# Kernel traffic credited per step (bytes read + written, as the memcpy):
# one-pass compute (the default) reads and writes each interior cell once;
# with --compute two-pass (CHECKMPI_BENCH_ARGS) the kernels copy the whole
# fields, halos included, then shift the interior (with overlap they copy
# only the interior). With overlap part of the kernels runs while MPI waits
# and may be timed as communication (step9's queues), so its ratio reads
# high; strategies without overlap time their kernels whole.
set -euo pipefail
cd "$(dirname "$0")/.."
itfin=${1:-100} edge1=${2:-256} edge8=${3:-128}
bin=${CHECKMPI_BIN:-build-cuda/bin}
[ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found (build with CUDA first)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck source=bench/launcher.sh
source bench/launcher.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# run TAG NP EDGE PX PY PZ [options...]: EDGE^3 cells per rank on a PXxPYxPZ grid.
run() {
  local tag=$1 np=$2 edge=$3 px=$4 py=$5 pz=$6
  shift 6
  local flags
  read -ra flags <<<"$(launcher_flags "$np")"
  # shellcheck disable=SC2086
  "$mpiexec" -n "$np" "${flags[@]}" "$bin/checkmpi-halo" --no-input --backend cuda --strategy all \
    --lx $((edge * px)) --ly $((edge * py)) --lz $((edge * pz)) --proc_x "$px" --proc_y "$py" --proc_z "$pz" \
    --itfin "$itfin" --icheck "$itfin" --warmup 5 --memcpy-probe --outdir "$out/$tag" --json "$out/$tag.json" \
    "$@" ${CHECKMPI_BENCH_ARGS:-} >"$out/$tag.log" 2>&1 || { cat "$out/$tag.log"; exit 1; }
}
# summarise TAG...: the tables of those runs (TAG stage: the staged vs CUDA-aware one), printed as each ends.
summarise() {
  python3 - "$out" "$@" <<'PY'
import json, os, sys
from collections import Counter
out = sys.argv[1]

def load(tag):
    path = os.path.join(out, tag + ".json")
    return json.load(open(path)) if os.path.exists(path) else None

def traffic(r, l, m, n, real):
    interior = 2 * 3 * l * m * n * real               # read + written, three fields
    whole = 2 * 3 * (l + 2) * (m + 2) * (n + 2) * real
    if r["parts"]["compute"] != "two-pass":
        return interior
    return 2 * interior if r["traits"]["overlaps"] else whole + interior

for tag in (t for t in sys.argv[2:] if t != "stage"):
    doc = load(tag)
    c, ctx = doc["config"], doc["context"]
    l, m, n = c["l"], c["m"], c["n"]
    real = 4 if c["precision"] == "single" else 8
    memcpy = doc["probes"]["memcpy_bandwidth"]["mean"]
    ranks_gpus = ctx.get("gpus") or []  # null on the host backend
    gpus = sorted({g["name"] for g in ranks_gpus}) or ["the host (no GPU)"]
    print(f"# {ctx['nprocs']} rank(s) on {', '.join(gpus)}, local {l}x{m}x{n}, {c['precision']}, "
          f"{c['itfin']} steps; CUDA-aware MPI: {ctx['gpu_aware_mpi']}; D2D cudaMemcpy {memcpy / 1e9:.1f} GB/s per rank")
    share = max(Counter((g["node"], g["device"]) for g in ranks_gpus).values(), default=0)
    if share > 1:
        print(f"# {share} ranks share a GPU: unless MPS runs (nvidia-cuda-mps-control -d), the GPU time-slices "
              "between their processes and every kernel and copy waits for the others' turns")
    print("# step: median time per step, validation excluded; GB/s and ratio: compute kernels against that memcpy;"
          " pack and unpack: ms per step")
    print(f"{'strategy':30} {'step(ms)':>8} {'compute(s)':>10} {'GB/s':>7} {'ratio':>5}  "
          + " ".join(f"{p + ' ' + d:>9}" for p in ("pack", "unpack") for d in "xyz") + "  MPI buffers")
    for r in doc["results"]:
        t, steps = r["timers"], r["steps"]
        bw = traffic(r, l, m, n, real) * steps / t["compute"]["mean"]
        per_dir = " ".join(f"{1e3 * t[p + '_' + d]['mean'] / steps:9.3f}" for p in ("pack", "unpack") for d in "xyz")
        name = (r['strategy'] + ' ' + r['catalog']['alias'])[:30]
        print(f"{name:30} {1e3 * r['step_time']['median']:8.3f} {t['compute']['mean']:10.4f} "
              f"{bw / 1e9:7.1f} {bw / memcpy:5.2f}  {per_dir}  {r['mpi_buffers']}")
    print()

if "stage" in sys.argv[2:]:
    staged = load("np8_stage")
    if staged is None:
        print("# staged vs CUDA-aware: not measured (MPI is not CUDA-aware, or cannot tell: every run above is staged)")
    else:
        aware = {r["strategy"]: r for r in load("np8")["results"]}
        print("# 8 ranks: median time per step (ms), device buffers to CUDA-aware MPI vs --stage")
        print(f"{'strategy':24} {'aware':>8} {'staged':>8} {'staged/aware':>12}")
        for r in staged["results"]:
            a, s = 1e3 * aware[r["strategy"]]["step_time"]["median"], 1e3 * r["step_time"]["median"]
            print(f"{r['strategy'] + ' ' + r['catalog']['alias']:24} {a:8.4f} {s:8.4f} {s / a:12.2f}")
PY
}
if [ "$edge1" != 0 ]; then
  run np1 1 "$edge1" 1 1 1
  summarise np1
fi
[ "$edge8" != 0 ] || exit 0
run np8 8 "$edge8" 2 2 2
summarise np8
aware=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["context"]["gpu_aware_mpi"])' "$out/np8.json")
[ "$aware" != True ] || run np8_stage 8 "$edge8" 2 2 2 --stage
summarise stage
