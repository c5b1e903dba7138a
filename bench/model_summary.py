#!/usr/bin/env python3
"""model_summary.py MACHINE.json... -- RUN.json...: bench/model.sh's table.

Each case is predicted from the profile (given several, the one calibrated at the block nearest its own), at its
working set.

Runs of the same rank count and block are rounds of one case; per case and
strategy it prints the predicted and the measured pack, MPI (with barriers and
self-exchanges), unpack, compute and total per step of its best round (the
shortest total: the profile holds the best of calibrate's runs too, and noise
only ever slows a run down), and measured/predicted, flagging ratios outside
[0.67, 1.5]."""

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
        cases[(run.nprocs, run.local)].append(run)
    inside = total = 0
    ratios: dict[str, dict[tuple, float]] = defaultdict(dict)  # strategy -> case -> measured / predicted
    for m in machines:
        print(f"# profile {m.path}: {m.context.get('host')}, block {m.pack_host.local}, {m.context['ranks']} ranks")
    print("# us per step; pred. / meas. (the best round); ratio = measured / predicted")
    # Rows in the catalog's order (the runs shuffle theirs; $CHECKMPI_BIN's checkmpi-halo lists it).
    order = {r.id: i for i, r in enumerate(catalog.load("all"))}
    for (nprocs, local), runs in sorted(cases.items()):
        first = runs[0]
        rows = catalog.rows_of_run(first)
        ids = sorted((s.id for s in first.ran() if s.id in rows), key=lambda i: order.get(i, len(order)))
        cells = math.prod(local)
        machine = min(machines, key=lambda m: abs(math.log(math.prod(m.pack_host.local) / cells)))
        preds = {p.row.id: p for p in predict([_named(rows[i], i) for i in ids], case_of(first), machine)}
        print(f"\n## {nprocs} ranks {'x'.join(map(str, first.dims))}, local {'x'.join(map(str, local))}, "
              f"{len(runs)} rounds")
        print(f"{'strategy':20}" + "".join(f"{p:>17}" for p in PHASES) + f"{'ratio':>7}")
        for sid in ids:
            meas = min((measured_phases(_result(r, sid)) for r in runs), key=lambda m: m["total"])
            pred = predicted_phases(preds[sid])
            ratio = meas["total"] / pred["total"] if pred["total"] > 0 else float("nan")
            ok = LOW <= ratio <= HIGH
            ratios[sid][(nprocs, local)] = ratio
            inside += ok
            total += 1
            text = "".join(f"{pred[k] * 1e6:>8.1f}/{meas[k] * 1e6:<8.1f}" for k in PHASES)
            print(f"{sid:20}{text} {ratio:6.2f}{'' if ok else ' *'}")
    print(f"\n{inside} of {total} strategy cases within [{LOW}, {HIGH}] of the prediction (* outside)")
    _matrix(ratios, sorted(cases))
    return 0


def _matrix(ratios: dict[str, dict[tuple, float]], keys: list[tuple]) -> None:
    """measured / predicted, strategy by case, and how many of each case fall in the band."""
    names = [f"{n}r {local[0]}^3" if len(set(local)) == 1 else f"{n}r {'x'.join(map(str, local))}"
             for n, local in keys]
    print("\n# measured / predicted (* outside the band)")
    print(f"{'strategy':20}" + "".join(f"{n:>10}" for n in names))
    for sid, row in ratios.items():
        cells = (f"{row[k]:.2f}{' ' if LOW <= row[k] <= HIGH else '*'}" if k in row else "- " for k in keys)
        print(f"{sid:20}" + "".join(f"{c:>10}" for c in cells))
    counts = (f"{sum(LOW <= r[k] <= HIGH for r in ratios.values() if k in r)}/"
              f"{sum(k in r for r in ratios.values())} " for k in keys)
    print(f"{'in band':20}" + "".join(f"{c:>10}" for c in counts))


def _named(row: catalog.Row, sid: str) -> catalog.Row:
    import dataclasses

    return dataclasses.replace(row, id=sid)


def _result(run: HaloRun, sid: str):
    return next(s for s in run.ran() if s.id == sid)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
