#!/usr/bin/env bash
# Compute-phase and pack/unpack bandwidth of every strategy, all measured in
# the same runs, interleaved and repeated (this machine is noisy: only
# figures taken together mean something).
#
#   bench/halo_bandwidth.sh                          the standard set: 1 rank 256^3 and 2 ranks 128^3
#                                                    per rank, each with 1 and 2 OpenMP threads per rank
#   bench/halo_bandwidth.sh NP EDGE [ITFIN] [ROUNDS] one configuration (OMP_NUM_THREADS as set)
#
# Each round runs checkmpi-halo twice, back to back: with the host kernels as
# built (tuned) and with CHECKMPI_PLAIN_KERNELS=1 (plain loops: no streaming
# stores, prefetching or huge pages). Every figure printed is the median over
# the rounds of that figure in each run:
#   ratio    compute-phase bandwidth / memcpy bandwidth of the same run; the
#            compute is credited with the bytes the shift must move (each
#            interior cell of the three fields read once and written once per
#            step), memcpy with bytes read + written. Target >= 0.9.
#   vs step2 loop time / step2's loop time in the same run. Target <= 1.2.
#   pack/unpk GB/s per direction (both signs, three fields, whole planes),
#            tuned, and tuned / plain.
# Extra checkmpi-halo options can follow in CHECKMPI_BENCH_ARGS (e.g.
# "--compute two-pass" or "--strategy step2,step7").
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CHECKMPI_BIN:-build/bin}
[ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found (build first)" >&2; exit 2; }

if [ $# -eq 0 ]; then
  for config in "1 256 40" "2 128 100"; do
    for threads in 1 2; do
      # shellcheck disable=SC2086
      OMP_NUM_THREADS=$threads bash "$0" $config
    done
  done
  exit 0
fi

np=$1 edge=$2 itfin=${3:-40} rounds=${4:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=()
mpiexec --version 2>&1 | grep -Eq "Open MPI|OpenRTE" && flags=(--oversubscribe)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
run() {  # run NAME [ENV...]
  local name=$1
  shift
  # shellcheck disable=SC2086
  env "$@" mpiexec -n "$np" "${flags[@]}" "$bin/checkmpi-halo" --no-input --lx $((edge * np)) --ly "$edge" \
    --lz "$edge" --proc_x "$np" --proc_y 1 --proc_z 1 --itfin "$itfin" --icheck "$itfin" --warmup 2 \
    --strategy all --memcpy-probe --outdir "$out/o" --json "$out/$name.json" ${CHECKMPI_BENCH_ARGS:-} \
    >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
}
for r in $(seq "$rounds"); do
  run "tuned.$r"
  run "plain.$r" CHECKMPI_PLAIN_KERNELS=1
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
runs = {kind: [json.load(open(f"{out}/{kind}.{r}.json")) for r in range(1, rounds + 1)] for kind in ("tuned", "plain")}
first = runs["tuned"][0]
c, ctx = first["config"], first["context"]
real = 4 if c["precision"] == "single" else 8
l, m, n = c["l"], c["m"], c["n"]
plane = {"x": (m + 2) * (n + 2), "y": (l + 2) * (n + 2), "z": (l + 2) * (m + 2)}
med = statistics.median

def figures(doc):
    """Per strategy: compute ratio to memcpy, loop / step2's loop, pack and unpack GB/s per direction."""
    memcpy = doc["probes"]["memcpy_bandwidth"]["mean"]
    step2 = next(r for r in doc["results"] if r["strategy"] == "step2")["timers"]["loop"]["max"]
    out = {}
    for r in doc["results"]:
        t = r["timers"]
        bw = r["compute_bytes_per_step"] * r["steps"] / t["compute"]["mean"]
        f = {"gbs": bw / 1e9, "ratio": bw / memcpy, "vs2": t["loop"]["max"] / step2, "loop": t["loop"]["max"]}
        for d in "xyz":
            moved = 2 * 3 * plane[d] * real * r["steps"]  # both signs, three fields, per step
            for phase in ("pack", "unpack"):
                secs = t[f"{phase}_{d}"]["mean"]
                f[f"{phase}_{d}"] = moved / secs / 1e9 if secs > 0 else None
        out[r["strategy"]] = (r["alias"], f)
    return out, memcpy

tuned = [figures(d) for d in runs["tuned"]]
plain = [figures(d) for d in runs["plain"]]
memcpy = med(m for _, m in tuned)
print(f"# {ctx['nprocs']} rank(s), local {l}x{m}x{n}, {c['precision']}, compute {c.get('compute', 'one-pass')}, "
      f"{c['itfin']} steps, {ctx.get('omp_threads', 1)} thread(s)/rank, {rounds} rounds; "
      f"memcpy {memcpy / 1e9:.2f} GB/s per rank (median)")
print(f"{'strategy':30} {'loop(s)':>8} {'GB/s':>6} {'ratio':>5} {'vs step2':>8}   "
      + " ".join(f"{'pack ' + d:>6} {'unpk ' + d:>6}" for d in "xyz") + "   tuned/plain: "
      + " ".join(f"{'pk ' + d:>5} {'up ' + d:>5}" for d in "xyz"))
for sid, (alias, _) in tuned[0][0].items():
    def m(key, runs=tuned):
        values = [fig[0][sid][1][key] for fig in runs if fig[0][sid][1][key] is not None]
        return med(values) if values else None
    cells, gains = [], []
    for d in "xyz":
        for phase in ("pack", "unpack"):
            key = f"{phase}_{d}"
            t = m(key)
            cells.append(f"{t:6.2f}" if t else f"{'-':>6}")
            ratios = [a[0][sid][1][key] / b[0][sid][1][key] for a, b in zip(tuned, plain)
                      if a[0][sid][1][key] and b[0][sid][1][key]]
            gains.append(f"{med(ratios):5.2f}" if ratios else f"{'-':>5}")
    label = f"{sid} {alias}"[:30]
    print(f"{label:30} {m('loop'):8.4f} {m('gbs'):6.2f} {m('ratio'):5.2f} {m('vs2'):8.2f}   "
          + " ".join(cells) + "                " + " ".join(gains))
PY
