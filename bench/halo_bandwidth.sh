#!/usr/bin/env bash
# Every strategy's compute phase against the fastest correct way to do the
# same work, measured in the same runs, interleaved and repeated (this
# machine is noisy: only figures taken together mean something).
#
#   bench/halo_bandwidth.sh                          the standard set: 1 rank 128^3, 1 rank 256^3 and
#                                                    2 ranks 128^3 per rank, each with 1 and 2 OpenMP
#                                                    threads per rank
#   bench/halo_bandwidth.sh NP EDGE [ITFIN] [ROUNDS] one configuration (OMP_NUM_THREADS as set)
#
# Each round runs checkmpi-halo twice, back to back: every strategy with the
# default compute (in place on the host) and --compute-probe, in an order
# shuffled anew each round (seeded by the round's number, printed), so that
# a strategy's place in the run (the first ones' fresh memory, a slow spell
# of the VM's) reaches all alike; and step2 with --compute two-pass
# (CheckMPI's own loop), after the first in odd rounds, before it in even
# ones. Every figure printed is the median over the rounds
# of that figure in each run:
#   vs probe  the compute phase per step (mean over ranks) / the compute
#             probe's: the fastest of the backend's whole-step in-place
#             kernels (the lines, the memory-order sweep) on the run's own
#             three fields, no MPI, every rank at once, timed in a turn of
#             its own in every round among the strategies'. Target <= 1.1.
#   vs step2  loop time / step2's loop time in the same run. Target <= 1.1
#             for every row that packs into buffers, sends them and unpacks
#             them (mpi-pack too: MPI_Pack and MPI_Unpack make the same
#             passes as step2's loops); the rows that hand MPI the fields'
#             datatypes (pack=dtype: neighbor-alltoallw) are held to step0,
#             which does the same (MPI moves the planes with no pass of ours).
#   exch      pack + MPI + unpack per step (the comm timer, mean over ranks);
#             for step2 also / step2's with --compute two-pass. Target <= 1.1.
#   pack/unpk GB/s per direction (both signs, three fields, whole planes);
#             x also / step2's hand loop in the same run.
# After each table, every target's verdict per row from the rounds' values:
# met (the median's 95% confidence interval, from order statistics, lies at
# or below the target), not separated (the interval holds the target: this
# machine's noise, not a shown miss) or above (the whole interval above it).
# The header names the CPU, its caches and the ranks' binding: the results
# depend on them. Ranks are placed alike with either library (launcher.sh):
# each on as many cores as it has threads where they fit, else as Open MPI
# places them by default.
# STRATEGIES (default all; keep step2 in it) picks the strategies; extra
# checkmpi-halo options can follow in CHECKMPI_BENCH_ARGS (e.g.
# "--compute one-pass"). Another MPI library: CHECKMPI_BIN=build-mpich/bin
# MPIEXEC=mpiexec.mpich.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CHECKMPI_BIN:-build/bin}
[ -x "$bin/checkmpi-halo" ] || { echo "bench: $bin/checkmpi-halo not found (build first)" >&2; exit 2; }

if [ $# -eq 0 ]; then
  for config in "1 128 100" "1 256 40" "2 128 100"; do
    for threads in 1 2; do
      # shellcheck disable=SC2086
      OMP_NUM_THREADS=$threads bash "$0" $config
    done
  done
  exit 0
fi

np=$1 edge=$2 itfin=${3:-40} rounds=${4:-11}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck source=bench/launcher.sh
source bench/launcher.sh
read -ra flags <<<"$(launcher_flags "$np")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
run() {  # run NAME checkmpi-halo-options...
  local name=$1
  shift
  "$mpiexec" -n "$np" "${flags[@]}" "$bin/checkmpi-halo" --no-input --lx $((edge * np)) --ly "$edge" --lz "$edge" \
    --proc_x "$np" --proc_y 1 --proc_z 1 --itfin "$itfin" --icheck "$itfin" --warmup 2 --outdir "$out/o" \
    --json "$out/$name.json" "$@" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
}
# The strategies this MPI library runs, as checkmpi-halo resolves the selection.
ids=$("$bin/checkmpi-halo" --list-strategies --strategy "${STRATEGIES:-all}" --json - | python3 -c '
import json, sys
print(" ".join(r["id"] for r in json.load(sys.stdin)["strategies"] if r["unavailable"] is None))')
for r in $(seq "$rounds"); do
  # shellcheck disable=SC2086  # the ids, one argument each
  order=$(python3 -c 'import random, sys; ids = sys.argv[2:]; random.Random(int(sys.argv[1])).shuffle(ids)
print(",".join(ids))' "$r" $ids)
  echo "# round $r: $order" >>"$out/order"
  # The two launches take turns at going first: the second of a pair runs 2-4% slower here.
  if [ $((r % 2)) -eq 0 ]; then run "checkmpi.$r" --strategy step2 --compute two-pass; fi
  # shellcheck disable=SC2086
  run "all.$r" --strategy "$order" --compute-probe ${CHECKMPI_BENCH_ARGS:-}
  if [ $((r % 2)) -eq 1 ]; then run "checkmpi.$r" --strategy step2 --compute two-pass; fi
done
# shellcheck disable=SC2086
python3 - "$out" "$rounds" $ids <<'PY'
import json, math, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
runs = [json.load(open(f"{out}/all.{r}.json")) for r in range(1, rounds + 1)]
ref = [json.load(open(f"{out}/checkmpi.{r}.json")) for r in range(1, rounds + 1)]
first = runs[0]
c, ctx = first["config"], first["context"]
real = 4 if c["precision"] == "single" else 8
l, m, n = c["l"], c["m"], c["n"]
plane = {"x": (m + 2) * (n + 2), "y": (l + 2) * (n + 2), "z": (l + 2) * (m + 2)}
med = statistics.median
ids = sys.argv[3:]  # the catalog's order, for the table


def per_step(r, timer):
    return r["timers"][timer]["mean"] / r["steps"]


def figures(doc, checkmpi):
    """Per strategy: compute / probe, loop / step2's loop, exchange per step, pack and unpack GB/s per direction."""
    probe = doc["probes"]["compute"]["seconds_per_step"]["mean"]
    by_id = {r["strategy"]: r for r in doc["results"]}
    step2 = by_id["step2"]
    two_pass = next(r for r in checkmpi["results"] if r["strategy"] == "step2")
    out = {}
    for sid, r in by_id.items():
        t = r["timers"]
        f = {"probe": per_step(r, "compute") / probe, "vs2": t["loop"]["max"] / step2["timers"]["loop"]["max"],
             "loop": t["loop"]["max"], "exch": per_step(r, "comm"), "compute": per_step(r, "compute"),
             "exch2": per_step(r, "comm") / per_step(two_pass, "comm") if sid == "step2" else None}
        for d in "xyz":
            moved = 2 * 3 * plane[d] * real * r["steps"]  # both signs, three fields, per step
            for phase in ("pack", "unpack"):
                secs, hand = t[f"{phase}_{d}"]["mean"], step2["timers"][f"{phase}_{d}"]["mean"]
                f[f"{phase}_{d}"] = moved / secs / 1e9 if secs > 0 else None
                f[f"{phase}_{d}_hand"] = hand / secs if secs > 0 and hand > 0 else None
        if sid != "step2" and r["parts"]["pack"] == "dtype" and "step0" in by_id:
            f["vs_ref"] = t["loop"]["max"] / by_id["step0"]["timers"]["loop"]["max"]  # MPI moves the datatypes
        elif sid != "step2":
            f["vs_ref"] = f["vs2"]
        out[sid] = (r["catalog"]["alias"], r["parts"]["compute"], f)
    return out, probe


figs = [figures(d, k) for d, k in zip(runs, ref)]


def median_ci(values):
    """The median's distribution-free 95% interval: order statistics k and n+1-k, k the largest with
    P(Binomial(n, 1/2) < k) <= 0.025 (n = 7: the extremes, 98.4%); None below 6 values."""
    v, n = sorted(values), len(values)
    k = 0
    while sum(math.comb(n, i) for i in range(k + 1)) / 2**n <= 0.025:
        k += 1
    return (v[k - 1], v[n - k]) if k >= 1 else None


def verdict(values, target=1.1):
    ci = median_ci(values)
    if ci is None:
        return "too few rounds", ci
    return ("met" if ci[1] <= target else "above" if ci[0] > target else "not separated"), ci
probe = med(p for _, p in figs)
caches = ", ".join(f"L{x['level']} {x['bytes'] >> 10} KiB" + (f" x{x['shared_by']}" if x["shared_by"] > 1 else "")
                   for x in ctx.get("cpu", {}).get("caches", []) if x["level"] >= 2)
print(f"# {ctx['nprocs']} rank(s), local {l}x{m}x{n}, {c['precision']}, compute {c['compute']}, {c['itfin']} steps, "
      f"{ctx.get('omp_threads', 1)} thread(s)/rank, {rounds} rounds; {ctx.get('cpu', {}).get('model', '?')} "
      f"({caches}); {ctx['mpi_library']}; binding {ctx['binding']}")
kernels = {}  # each in-place kernel's probe time per round
for doc in runs:
    for name, t in doc["probes"]["compute"].get("kernels", {}).items():
        kernels.setdefault(name, []).append(t["mean"])
each = "".join(f"; {name} {med(v) * 1e3:.3f}" for name, v in kernels.items())
fastest = [doc["probes"]["compute"].get("fastest") for doc in runs]
print(f"# compute probe ({first['probes']['compute']['compute']}, no MPI): {probe * 1e3:.3f} ms per step (median of "
      f"each round's fastest kernel{each}; fastest " + ", ".join(f"{k} in {fastest.count(k)}" for k in sorted(
          set(fastest), key=str)) + " rounds); each round's order: random.Random(round).shuffle")
print(f"{'strategy':26} {'compute':>8} {'loop(s)':>8} {'comp ms':>8} {'vs probe':>8} {'vs step2':>8} "
      f"{'exch ms':>8} {'vs 2-pass':>9}   " + " ".join(f"{'pack ' + d:>6} {'unpk ' + d:>6}" for d in "xyz")
      + "   x / step2's: pack unpk")
for sid, (alias, compute, _) in sorted(figs[0][0].items(), key=lambda kv: ids.index(kv[0])):
    def m(key):
        values = [fig[0][sid][2][key] for fig in figs if fig[0][sid][2][key] is not None]
        return med(values) if values else None

    def cell(key, fmt, width):
        v = m(key)
        return f"{v:{width}{fmt}}" if v is not None else f"{'-':>{width}}"

    bw = " ".join(cell(f"{p}_{d}", ".2f", 6) for d in "xyz" for p in ("pack", "unpack"))
    label = f"{sid} {alias}"[:26]
    print(f"{label:26} {compute:>8} {m('loop'):8.4f} {m('compute') * 1e3:8.3f} {m('probe'):8.2f} {m('vs2'):8.2f} "
          f"{m('exch') * 1e3:8.3f} {cell('exch2', '.2f', 9)}   {bw}   {cell('pack_x_hand', '.2f', 9)} "
          f"{cell('unpack_x_hand', '.2f', 4)}")
targets = [("compute vs probe", "probe"), ("loop vs step2 (datatype rows: vs step0)", "vs_ref"),
           ("step2's exchange vs 2-pass", "exch2")]
print(f"# targets <= 1.1, median over {rounds} rounds with its 95% CI:")
for title, key in targets:
    tally = {"met": [], "not separated": [], "above": [], "too few rounds": []}
    for sid in ids:
        values = [fig[0][sid][2][key] for fig in figs if sid in fig[0] and fig[0][sid][2].get(key) is not None]
        if values:
            word, ci = verdict(values)
            tally[word].append(f"{sid} {med(values):.2f}" + (f" ({ci[0]:.2f}-{ci[1]:.2f})" if ci else ""))
    print(f"#   {title}: " + "; ".join(f"{len(rows)} {word}" + (": " + ", ".join(rows) if word != "met" else "")
                                     for word, rows in tally.items() if rows))
PY
