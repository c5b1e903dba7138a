"""Halo results as CSV (one row per run x strategy x timer statistic) or as
Extra-P's JSON Lines input (one measurement per line)."""

from __future__ import annotations

import csv
import io
import json

from checkmpi.results import HaloRun

CSV_COLUMNS = ("file", "date", "mpi_library", "nprocs", "proc_x", "proc_y", "proc_z", "lx", "ly", "lz", "l", "m",
               "n", "precision", "strategy", "alias", "valid", "steps", "timer", "stat", "seconds",
               "seconds_per_step")


def to_csv(runs: list[HaloRun]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for run in runs:
        c = run.config
        fixed = [str(run.path), run.context.get("date", ""), run.context.get("mpi_library", ""), run.nprocs,
                 *run.dims, *run.global_size, c["l"], c["m"], c["n"], run.precision]
        for s in run.ran():
            for timer in s.timers:  # every timer the tool wrote, in its order
                for stat in ("min", "mean", "max"):
                    value = s.timers[timer].get(stat)
                    writer.writerow(fixed + [s.id, s.alias, str(s.valid).lower(), s.steps, timer, stat,
                                             repr(value), repr(value / s.steps) if s.steps else ""])
    return out.getvalue()


def extrap_parameters(runs: list[HaloRun]) -> list[str]:
    """Modelling parameters: those of p (ranks) and n (cells per rank) that vary
    across the runs; p alone when nothing varies (Extra-P needs one)."""
    values = {"p": {r.nprocs for r in runs}, "n": {_cells(r) for r in runs}}
    varying = [name for name, seen in values.items() if len(seen) > 1]
    return varying or ["p"]


def _cells(run: HaloRun) -> int:
    l, m, n = run.local
    return l * m * n


def to_extrap(runs: list[HaloRun]) -> str:
    """Extra-P JSON Lines: per run, strategy (callpath) and timer (metric), the
    time per step in seconds, max over ranks (what the tables show)."""
    names = extrap_parameters(runs)
    lines = []
    for run in runs:
        point = {"p": run.nprocs, "n": _cells(run)}
        params = {name: point[name] for name in names}
        for s in run.ran():
            for timer in s.timers if s.steps else ():
                lines.append(json.dumps({"params": params, "callpath": s.id, "metric": f"time_{timer}",
                                         "value": s.timers[timer].max / s.steps}))
    return "\n".join(lines) + ("\n" if lines else "")
