#!/usr/bin/env bash
# Every strategy of the catalog against step7 (isend-irecv), measured in the
# same runs: each round is one checkmpi-halo job running every row one after
# another (A B C ... A B C ...), and every figure is the median over rounds.
#
#   bench/strategies.sh                      2 ranks and 8 ranks (oversubscribed where cores are fewer)
#   bench/strategies.sh NP [EDGE] [ITFIN] [ROUNDS]
#                                            one rank count; EDGE^3 cells per rank (default 64), ITFIN
#                                            steps (default 200), ROUNDS jobs (default 5)
#
# Printed per strategy: loop time per step (max over ranks), its ratio to
# step7's in the same job, the share of MPI (comm) time, and the traits
# (messages per step, whether compute overlaps them). Extra checkmpi-halo
# options can follow in CHECKMPI_BENCH_ARGS; MPIEXEC selects the launcher.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CHECKMPI_BIN:-build/bin}
[ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found (build first)" >&2; exit 2; }

if [ $# -eq 0 ]; then
  bash "$0" 2
  bash "$0" 8
  exit 0
fi

np=$1 edge=${2:-64} itfin=${3:-200} rounds=${4:-5}
# shellcheck source=bench/launcher.sh
source bench/launcher.sh
read -ra flags <<<"$(launcher_flags "$np")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
dims=$(python3 -c "
import sys; n = int(sys.argv[1]); d = [1, 1, 1]; i = 0
while n > 1:
    p = next(q for q in range(2, n + 1) if n % q == 0); d[i % 3] *= p; n //= p; i += 1
print(*d)" "$np")
read -r px py pz <<<"$dims"
for r in $(seq "$rounds"); do
  # shellcheck disable=SC2086
  "$mpiexec" -n "$np" "${flags[@]}" "$bin/checkmpi-halo" --no-input --lx $((edge * px)) --ly $((edge * py)) \
    --lz $((edge * pz)) --proc_x "$px" --proc_y "$py" --proc_z "$pz" --itfin "$itfin" --icheck "$itfin" \
    --warmup 5 --strategy all --outdir "$out/o" --json "$out/r$r.json" ${CHECKMPI_BENCH_ARGS:-} \
    >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
docs = [json.load(open(f"{out}/r{r}.json")) for r in range(1, rounds + 1)]
c, ctx = docs[0]["config"], docs[0]["context"]
med = statistics.median
print(f"# {ctx['nprocs']} ranks ({c['proc_x']}x{c['proc_y']}x{c['proc_z']}), local {c['l']}x{c['m']}x{c['n']}, "
      f"{c['precision']}, {c['itfin']} steps, {rounds} rounds, {ctx['mpi_library'].split(',')[0]}")
for k in docs[0]["skipped"]:
    print(f"# skipped {k['strategy']}: {k['reason']}")
print(f"{'strategy':34} {'us/step':>9} {'/step7':>7} {'%MPI':>6} {'msgs':>5} {'overlap':>8}")
def per_step(r):
    return r["timers"]["loop"]["max"] / r["steps"]
for i, first in enumerate(docs[0]["results"]):
    rows = [d["results"][i] for d in docs]
    step7 = [next(r for r in d["results"] if r["strategy"] == "step7") for d in docs]
    ratio = med(per_step(a) / per_step(b) for a, b in zip(rows, step7))
    mpi = med(100 * r["timers"]["comm"]["max"] / r["timers"]["loop"]["max"] for r in rows)
    t = first["traits"]
    valid = "" if all(r["valid"] for r in rows) else "  INVALID"
    print(f"{(first['strategy'] + ' ' + first['catalog']['alias'])[:34]:34} {med(map(per_step, rows)) * 1e6:9.1f} "
          f"{ratio:7.2f} {mpi:6.1f} {t['messages']:5d} {'yes' if t['overlaps'] else 'no':>8}{valid}")
PY
