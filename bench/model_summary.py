#!/usr/bin/env python3
"""model_summary.py MACHINE.json... -- RUN.json...: bench/model.sh's table.

Each case is predicted from the profile (given several, the one calibrated at the block nearest its own), at its
working set.

Runs of the same rank count, nodes and block are rounds of one case (across nodes, e.g. the emulated nodes of
bench/model.sh's NODES: "4n x 2r" is 2 ranks on each of 4 nodes); per case and
strategy it prints the predicted and the measured pack, MPI (with barriers and
self-exchanges), unpack, compute and total per step of its best round (the
shortest total: the profile holds the best of calibrate's runs too, and noise
only ever slows a run down), and measured/predicted, flagging ratios outside
[0.67, 1.5]. Then the same with the best round's median step (checkmpi-halo's headline statistic) in place of
its mean: on a machine shared with other jobs a rank that waits in MPI gives its CPU away (across emulated nodes
it yields), and the others' time slices land in the mean of the steps that wait, not in their median."""

from __future__ import annotations

import math
import sys
from collections import defaultdict

from checkmpi import catalog
from checkmpi.machine import load_machine
from checkmpi.model import predict
from checkmpi.model_tables import measured_phases, predicted_phases
from checkmpi.report import case_of
from checkmpi.results import HaloRun, load

LOW, HIGH = 0.67, 1.5
PHASES = ("pack", "mpi", "unpack", "compute", "total")


def main(argv: list[str]) -> int:
    split = argv.index("--")
    machines = [load_machine(p) for p in argv[1:split]]
    cases: dict[tuple, list[HaloRun]] = defaultdict(list)
    for path in argv[split + 1:]:
        run = load(path)
        assert isinstance(run, HaloRun)
        nodes = int(run.context.get("nodes") or 1)
        cases[(run.nprocs, nodes, run.local)].append(run)
    inside = total = inside_median = 0
    ratios: dict[str, dict[tuple, float]] = defaultdict(dict)  # strategy -> case -> measured / predicted
    medians: dict[str, dict[tuple, float]] = defaultdict(dict)  # the same with the median step
    for m in machines:
        print(f"# profile {m.path}: {m.context.get('host')}, block {m.pack_host.local}, {m.context['ranks']} ranks")
    print("# us per step; pred. / meas. (the best round); ratio = measured / predicted")
    # Rows in the catalog's order (the runs shuffle theirs; $CHECKMPI_BIN's checkmpi-halo lists it).
    order = {r.id: i for i, r in enumerate(catalog.load("all"))}
    for (nprocs, nodes, local), runs in sorted(cases.items()):
        first = runs[0]
        rows = catalog.rows_of_run(first)
        ids = sorted((s.id for s in first.ran() if s.id in rows), key=lambda i: order.get(i, len(order)))
        cells = math.prod(local)
        machine = min(machines, key=lambda m: abs(math.log(math.prod(m.pack_host.local) / cells)))
        preds = {p.row.id: p for p in predict([_named(rows[i], i) for i in ids], case_of(first), machine)}
        where = (f" on {nodes} nodes ({first.context.get('ranks_per_cpu', '?')} ranks per CPU)" if nodes > 1
                 else "")
        print(f"\n## {nprocs} ranks {'x'.join(map(str, first.dims))}{where}, local {'x'.join(map(str, local))}, "
              f"{len(runs)} rounds")
        print(f"{'strategy':20}" + "".join(f"{p:>17}" for p in PHASES) + f"{'ratio':>7}{'median':>8}")
        for sid in ids:
            meas = min((measured_phases(_result(r, sid)) for r in runs), key=lambda m: m["total"])
            pred = predicted_phases(preds[sid])
            ratio = meas["total"] / pred["total"] if pred["total"] > 0 else float("nan")
            ok = LOW <= ratio <= HIGH
            ratios[sid][(nprocs, nodes, local)] = ratio
            step = min(float(_result(r, sid).raw["step_time"]["median"]) for r in runs)
            medians[sid][(nprocs, nodes, local)] = by_median = step / pred["total"] if pred["total"] > 0 else math.nan
            inside += ok
            inside_median += LOW <= by_median <= HIGH
            total += 1
            text = "".join(f"{pred[k] * 1e6:>8.1f}/{meas[k] * 1e6:<8.1f}" for k in PHASES)
            print(f"{sid:20}{text} {ratio:6.2f}{' ' if ok else '*'} {by_median:6.2f}{'' if LOW <= by_median <= HIGH else '*'}")
    print(f"\n{inside} of {total} strategy cases within [{LOW}, {HIGH}] of the prediction (* outside); "
          f"{inside_median} by the median step")
    _matrix(ratios, sorted(cases))
    _matrix(medians, sorted(cases), "the best round's median step / predicted")
    return 0


def _matrix(ratios: dict[str, dict[tuple, float]], keys: list[tuple], what: str = "measured / predicted") -> None:
    """measured / predicted, strategy by case, and how many of each case fall in the band."""
    names = [(f"{nodes}nx{n // nodes}r " if nodes > 1 else f"{n}r ") +
             (f"{local[0]}^3" if len(set(local)) == 1 else "x".join(map(str, local))) for n, nodes, local in keys]
    print(f"\n# {what} (* outside the band)")
    width = max(10, *(len(n) + 2 for n in names))
    print(f"{'strategy':20}" + "".join(f"{n:>{width}}" for n in names))
    for sid, row in ratios.items():
        cells = (f"{row[k]:.2f}{' ' if LOW <= row[k] <= HIGH else '*'}" if k in row else "- " for k in keys)
        print(f"{sid:20}" + "".join(f"{c:>{width}}" for c in cells))
    counts = (f"{sum(LOW <= r[k] <= HIGH for r in ratios.values() if k in r)}/"
              f"{sum(k in r for r in ratios.values())} " for k in keys)
    print(f"{'in band':20}" + "".join(f"{c:>{width}}" for c in counts))


def _named(row: catalog.Row, sid: str) -> catalog.Row:
    import dataclasses

    return dataclasses.replace(row, id=sid)


def _result(run: HaloRun, sid: str):
    return next(s for s in run.ran() if s.id == sid)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
