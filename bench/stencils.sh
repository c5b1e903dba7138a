#!/usr/bin/env bash
# Halos of real codes (issue 34): what edge and corner neighbours cost, and
# the whole validation matrix.
#
#   bench/stencils.sh cost [NP] [EDGE] [FIELDS] [WIDTH] [ROUNDS] [ITFIN]
#       Every strategy with 6, 18 and 26 neighbours at the same size: NP ranks
#       (default 2), EDGE^3 cells per rank (default 64), FIELDS fields
#       (default 19, a D3Q19 code's), halo WIDTH (default 1), ROUNDS rounds
#       (default 5) of ITFIN steps (default 200). Each round runs the three
#       stencils one after another, in an order shuffled per round (seeded by
#       the round); every figure is the median over rounds of a launch's
#       median step (over ranks, steps and its own rounds), and of its parts
#       (that median times a phase's share of the loop, means over ranks: a
#       rank's sums take every preemption of a loaded machine, its median
#       step not). Printed per strategy: us per step and exchange us per step with
#       6, 18 and 26 neighbours, the ratios 18/6 and 26/6 of each, and the
#       messages per step.
#   bench/stencils.sh validate
#       tests/mpi/halo_case.sh (every strategy, md5-identical profiles, the
#       exact check) for halo widths 1-3, fields 1, 3 and 19, neighbours 6,
#       18 and 26, on 1, 2, 4 and 8 ranks (grids 1x1x1, 2x1x1, 2x2x1,
#       2x2x2: every direction of one rank a self-exchange somewhere), both
#       directions alternately: 108 cases, a line each, and a count of those
#       that failed (exit 1 if any).
#
# MPIEXEC selects the launcher; CHECKMPI_BIN the build (default build/bin).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${CHECKMPI_BIN:-build/bin}")
[ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found (build first)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mode=${1:-}
shift || true

if [ "$mode" = validate ]; then
  # halo_case.sh's launcher, as ctest gives it (tests/CMakeLists.txt).
  export MPIEXEC=${MPIEXEC:-mpiexec} MPIEXEC_NUMPROC_FLAG=-n MPIEXEC_FLAGS=""
  "$MPIEXEC" --version 2>&1 | grep -Eq "Open MPI|OpenRTE" && export MPIEXEC_FLAGS=--oversubscribe
  [ -x .venv/bin/python ] && export CHECKMPI_PYTHON=${CHECKMPI_PYTHON:-$PWD/.venv/bin/python}
  failed=0 n=0
  for grid in "1 1 1 1" "2 2 1 1" "4 2 2 1" "8 2 2 2"; do
    for width in 1 2 3; do
      for fields in 1 3 19; do
        for neighbours in 6 18 26; do
          n=$((n + 1))
          extra=()
          [ $((n % 2)) -eq 0 ] && extra=(--reverse)
          # shellcheck disable=SC2086
          if line=$(CHECKMPI_BIN=$bin CHECKMPI_TEST_ROUNDS=2 bash "$PWD/tests/mpi/halo_case.sh" $grid --halo-width "$width" \
                    --fields "$fields" --neighbours "$neighbours" "${extra[@]}" 2>&1 | tail -n 1); then
            echo "ok   np=${grid%% *} width=$width fields=$fields neighbours=$neighbours ${extra[*]}"
          else
            failed=$((failed + 1))
            echo "FAIL np=${grid%% *} width=$width fields=$fields neighbours=$neighbours ${extra[*]}: $line"
          fi
        done
      done
    done
  done
  echo "# $n cases, $failed failed"
  [ "$failed" -eq 0 ]
  exit
fi

[ "$mode" = cost ] || { echo "usage: $0 cost [NP] [EDGE] [FIELDS] [WIDTH] [ROUNDS] [ITFIN] | validate" >&2; exit 2; }
np=${1:-2} edge=${2:-64} fields=${3:-19} width=${4:-1} rounds=${5:-5} itfin=${6:-200}
# shellcheck source=bench/launcher.sh
source bench/launcher.sh
read -ra flags <<<"$(launcher_flags "$np")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# bench/stencils.sh cost: $(uname -n), $(nproc) CPUs, $(date -u +%FT%TZ); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  order=$(python3 -c "import random, sys; s = [6, 18, 26]; random.Random(int(sys.argv[1])).shuffle(s); print(*s)" "$r")
  for neighbours in $order; do
    "$mpiexec" -n "$np" "${flags[@]}" "$bin/checkmpi-halo" --no-input --local "${edge}x${edge}x${edge}" \
      --iters "$itfin" --icheck "$itfin" --warmup 5 --strategy all --fields "$fields" --halo-width "$width" \
      --neighbours "$neighbours" --outdir "$out/o" --json "$out/r$r.n$neighbours.json" >"$out/log" 2>&1 ||
      { cat "$out/log"; exit 1; }
  done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
med = statistics.median
docs = {n: [json.load(open(f"{out}/r{r}.n{n}.json")) for r in range(1, rounds + 1)] for n in (6, 18, 26)}
c, ctx = docs[6][0]["config"], docs[6][0]["context"]
cpu = ctx.get("cpu") or {}
caches = ", ".join(f"L{k['level']} {k['bytes'] >> 10} KiB" for k in cpu.get("caches", []) if k["type"] != "Instruction")
print(f"# {ctx['nprocs']} ranks ({c['proc_x']}x{c['proc_y']}x{c['proc_z']}), local {c['l']}x{c['m']}x{c['n']}, "
      f"{c.get('fields', 3)} fields, halo width {c.get('halo_width', 1)}, {c['precision']}, {c['itfin']} steps, "
      f"{rounds} rounds; {ctx['mpi_library'].split(',')[0]}; CPU {cpu.get('model', '?')} ({caches})")
for k in docs[6][0]["skipped"]:
    print(f"# skipped {k['strategy']}: {k['reason']}")
print(f"{'strategy':22} {'us/step 6':>10} {'18':>8} {'26':>8} {'18/6':>6} {'26/6':>6}   "
      f"{'MPI 6':>7} {'18':>7} {'26':>7} {'18/6':>6} {'26/6':>6}   {'pack 6':>7} {'18':>7} {'26':>7}   "
      f"{'msgs 6/18/26':>13}  edges and corners")
def step(r):
    return r["step_time"]["median"]
def share(r, *timers):  # the median step's part in those timers (their share of the loop less its checks)
    t = r["timers"]
    return step(r) * sum(t[k]["mean"] for k in timers) / (t["loop"]["mean"] - t["diag"]["mean"])
for i, first in enumerate(docs[6][0]["results"]):
    rows = {n: [d["results"][i] for d in docs[n]] for n in docs}
    assert all(r["strategy"] == first["strategy"] for n in rows for r in rows[n])
    t = {n: med(step(r) for r in rows[n]) * 1e6 for n in rows}
    mpi = {n: med(share(r, "post", "wait") for r in rows[n]) * 1e6 for n in rows}
    pack = {n: med(share(r, "pack", "unpack") for r in rows[n]) * 1e6 for n in rows}
    ratio = lambda a, b: f"{a / b:6.2f}" if b > 0 else f"{'-':>6}"  # noqa: E731
    msgs = "/".join(str(rows[n][0]["traits"]["messages"]) for n in (6, 18, 26))
    valid = "" if all(r["valid"] for n in rows for r in rows[n]) else "  INVALID"
    how = first["catalog"]["traits"].get("edges_and_corners", "?")
    print(f"{first['strategy'][:22]:22} {t[6]:10.1f} {t[18]:8.1f} {t[26]:8.1f} {ratio(t[18], t[6])} {ratio(t[26], t[6])}   "
          f"{mpi[6]:7.1f} {mpi[18]:7.1f} {mpi[26]:7.1f} {ratio(mpi[18], mpi[6])} {ratio(mpi[26], mpi[6])}   "
          f"{pack[6]:7.1f} {pack[18]:7.1f} {pack[26]:7.1f}   {msgs:>13}  {how}{valid}")
PY
