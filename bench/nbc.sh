#!/usr/bin/env bash
# Overlap of non-blocking collectives on this machine (checkmpi-p2p nbc, OSU's
# definition), 2 ranks, with Open MPI (build/) and MPICH (build-mpich/), with
# and without MPI_Test calls during the compute (--progress 0,1,8,64), and
# with MPICH's progress thread (--progress-thread; Open MPI 4.1 has none for
# shared memory, so it is not run). The configurations run interleaved,
# ROUNDS times, their order rotating from round to round; per operation,
# size and MPI_Test count the tables give the median overlap over the rounds
# (and its range), then the medians of pure communication and of the
# blocking collective.
#   bench/nbc.sh [ROUNDS]   default 3; NBC_ARGS replaces the ops/sizes/counts
#   below; NBC_KEEP=DIR keeps the JSON files there.
# Timings on a shared machine are noisy: only figures taken together compare.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
args=${NBC_ARGS:-"--op ialltoall,iallreduce,ibcast -m 1024:1048576 -i 100 -x 10 --progress 0,1,8,64"}
pencil_args="--pencil 2x1 --grid 32x32x32,64x64x64,128x128x128 -i 100 -x 10 --progress 0,1,8,64"
if [ -n "${NBC_KEEP:-}" ]; then
  out=$NBC_KEEP
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# name, build folder, extra option: the configurations compared.
configs=()
add() {
  local mpiexec
  [ -x "$2/bin/checkmpi-p2p" ] || { echo "# $2/bin/checkmpi-p2p not built: $1 left out" >&2; return; }
  mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$2/CMakeCache.txt")
  configs+=("$1|$2|$mpiexec|$3")
}
add ompi build ""
add mpich build-mpich ""
add mpich+thread build-mpich --progress-thread
[ ${#configs[@]} -gt 0 ] || { echo "bench: nothing built (bash scripts/setup.sh --mpich)" >&2; exit 2; }

echo "# bench/nbc.sh: $(uname -n), $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $(date -u +%FT%TZ)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds"
for c in "${configs[@]}"; do
  IFS='|' read -r name dir mpiexec extra <<<"$c"
  echo "# $name: $mpiexec -n 2 $dir/bin/checkmpi-p2p nbc ... $extra"
done
echo "# ops: $args"
echo "# pencil: $pencil_args"
n=${#configs[@]}
for r in $(seq "$rounds"); do
  for i in $(seq 0 $((n - 1))); do
    IFS='|' read -r name dir mpiexec extra <<<"${configs[$(((i + r) % n))]}"
    # shellcheck disable=SC2086
    "$mpiexec" -n 2 "$dir/bin/checkmpi-p2p" nbc $args $extra --json "$out/$name.ops.$r.json" >/dev/null
    # shellcheck disable=SC2086
    "$mpiexec" -n 2 "$dir/bin/checkmpi-p2p" nbc $pencil_args $extra --json "$out/$name.pencil.$r.json" >/dev/null
  done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

names=()
for c in "${configs[@]}"; do names+=("${c%%|*}"); done
python3 - "$out" "$rounds" "${names[@]}" <<'PY'
import json, statistics, sys
out, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for part in ("ops", "pencil"):
    docs = {n: [json.load(open(f"{out}/{n}.{part}.{r}.json")) for r in range(1, rounds + 1)] for n in names}
    threads = {n: docs[n][0]["context"]["progress_thread"]["active"] for n in names}
    if part == "ops":
        for n in names:
            c = docs[n][0]["context"]
            print(f"# {n}: {c['mpi_library'].split(',')[0]}; cpus {[p['cpu'] for p in c['placement']]}; "
                  f"progress: {c['progress_thread']['note']}")
    first = docs[names[0]][0]["results"]
    key = lambda x: (x["op"], "x".join(map(str, x["grid"])) if "grid" in x else str(x["size"]))
    tests = sorted({x["tests"] for x in first})
    for op in dict.fromkeys(x["op"] for x in first):
        rows = list(dict.fromkeys(key(x)[1] for x in first if x["op"] == op))
        def values(n, k, t, f):
            return [f(x) for d in docs[n] for x in d["results"] if key(x) == (op, k) and x["tests"] == t]
        print(f"\n# {op}: OSU overlap (%), median of {rounds} rounds [min..max]; columns: config/MPI_Test calls"
              + "; progress thread on: " + (", ".join(n for n in names if threads[n]) or "none"))
        cols = [(n, t) for n in names for t in tests]
        print(f"{'# size':<12}" + "".join(f"{n + '/' + str(t):>20}" for n, t in cols))
        for k in rows:
            cells = []
            for n, t in cols:
                v = values(n, k, t, lambda x: x["overlap"] if x["overlap"] is not None else float("nan"))
                cells.append(f"{statistics.median(v):6.1f} [{min(v):4.0f}..{max(v):4.0f}]")
            print(f"{k:<12}" + "".join(f"{c:>20}" for c in cells))
        print(f"# {op}: medians over iterations, ranks and rounds (us): pure comm (post + wait) | blocking")
        print(f"{'# size':<12}" + "".join(f"{n:>24}" for n in names))
        for k in rows:
            pure = [statistics.median(values(n, k, tests[0], lambda x: x["pure_comm"]["median"])) for n in names]
            blk = [statistics.median(values(n, k, tests[0], lambda x: x["blocking"]["median"])) for n in names]
            print(f"{k:<12}" + "".join(f"{p * 1e6:11.2f} |{b * 1e6:10.2f}" for p, b in zip(pure, blk)))
PY
