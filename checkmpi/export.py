"""Results as CSV (halo: one row per run x strategy x timer statistic, each
row also carrying its strategy's ranking figures; p2p: one row per run x
message size x quantity statistic) or halo results as Extra-P's JSON Lines
input (one measurement per line)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from pathlib import Path

from checkmpi.atomic import refuse_inputs, write_text
from checkmpi.errors import CheckmpiError
from checkmpi.results import HaloRun, P2PRun, StrategyResult, load_all, x_join

CSV_COLUMNS = ("file", "date", "mpi_library", "nprocs", "proc_x", "proc_y", "proc_z", "lx", "ly", "lz", "l", "m",
               "n", "precision", "strategy", "alias", "valid", "steps", "timer", "stat", "seconds",
               "seconds_per_step") + (
    # The strategy's figures as the tables show them, on each of its rows: the median time per step (validation
    # excluded) and its 95% CI (bootstrap over launches or runs, rounds and steps), the rounds, runs (--repeat)
    # and launches (--samples) it pools, and checkmpi-halo's ranking: median over the fastest's with its CI (empty: not ranked, invalid),
    # tied with the fastest, in the run's fastest group.
    "median", "ci_low", "ci_high", "rounds", "runs", "launches", "vs_fastest", "vs_fastest_ci_low", "vs_fastest_ci_high",
    "tied", "in_fastest_group", "oversubscribed")


def to_csv(runs: list[HaloRun]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for run in runs:
        c = run.config
        fixed = [str(run.path), run.context.get("date", ""), run.context.get("mpi_library", ""), run.nprocs,
                 *run.dims, *run.global_size, c["l"], c["m"], c["n"], run.precision]
        for s in run.ran():
            head = fixed + [s.id, s.alias, str(s.valid).lower(), s.steps]
            tail = _ranking(run, s)
            for timer in s.timers:  # every timer the tool wrote, in its order (loop totals)
                for stat in ("min", "mean", "max"):
                    value = s.timers[timer].get(stat)  # NaN where the tool wrote null: an empty cell, as below
                    known = value is not None and math.isfinite(value)
                    writer.writerow(head + [timer, stat, repr(value) if known else "",
                                            repr(value / s.steps) if known and s.steps else ""] + tail)
            d = s.raw["step_time"]  # already per step: over ranks, steps, rounds and runs
            for stat in DISTRIBUTION:
                writer.writerow(head + ["step", stat, "", "" if d[stat] is None else repr(d[stat])] + tail)
    return out.getvalue()


def _ranking(run: HaloRun, s: StrategyResult) -> list[str]:
    """The columns from median on: what the table and the headline show of the strategy."""
    d, vs = s.raw["step_time"], s.vs_fastest
    ci = d["median_ci"] or ["", ""]
    ranked = [repr(vs.ratio), repr(vs.ci[0]), repr(vs.ci[1]), str(vs.tied).lower()] if vs else ["", "", "", ""]
    return ["" if d["median"] is None else repr(d["median"]), *map(str, ci), run.rounds, s.runs, run.launches, *ranked,
            str(s.id in run.fastest_group).lower(), str(run.oversubscribed).lower()]


DISTRIBUTION = ("min", "p5", "median", "mean", "p95", "max")
P2P_COLUMNS = ("file", "date", "mpi_library", "mode", "nprocs", "ranks", "size", "count", "blocklen", "stride", "op",
               "grid", "tests", "quantity", "stat", "value", "unit")
# Keys of a p2p result that say which measurement it is, not what was measured.
P2P_KEYS = ("nprocs", "size", "count", "blocklen", "stride", "bytes", "contiguous", "iterations", "block", "window",
            "op", "grid", "pencil", "comm_size", "tests", "warmup", "pairs", "sync", "per_thread")
UNITS = {"bandwidth": "B/s", "overlap": "%", "message_rate": "1/s"}  # of single values; every other one is a time in seconds


def p2p_csv(runs: list[P2PRun]) -> str:
    """Every number of every p2p result: distributions as one row per
    statistic (seconds), single values (bandwidth in B/s, LogGP times in s)
    as stat 'value'; whatever the mode, so new modes need nothing here."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(P2P_COLUMNS)
    for run in runs:
        for r in run.results:
            fixed = [str(run.path), run.context.get("date", ""), run.context.get("mpi_library", ""), run.mode,
                     run.context.get("nprocs", ""), r.get("nprocs", ""), r.get("size", r.get("bytes", "")),
                     r.get("count", ""), r.get("blocklen", ""), r.get("stride", ""),
                     f"{r['op']}/{r['sync']}" if "sync" in r else r.get("op", ""),
                     x_join(r["grid"]) if "grid" in r else "", r.get("tests", "")]
            for key, value in r.items():
                if key in P2P_KEYS:
                    continue
                if isinstance(value, dict) and "median" in value:  # a distribution (not "repeats")
                    for stat in DISTRIBUTION:
                        writer.writerow(fixed + [key, stat, "" if value[stat] is None else repr(value[stat]), "s"])
                elif isinstance(value, (int, float)) and not isinstance(value, bool):
                    writer.writerow(fixed + [key, "value", repr(value), UNITS.get(key, "s")])
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


# What else shapes a run's times: Extra-P would take runs that differ in one of these for repetitions of a point.
SAME_FOR_EXTRAP = (("config", "precision"), ("config", "fields"), ("config", "halo_width"), ("config", "neighbours"),
                   ("config", "compute"), ("config", "sync"), ("config", "self_copy"), ("config", "backend"),
                   ("config", "stage"), ("context", "mpi_library"))


def _refuse_mixed(runs: list[HaloRun]) -> None:
    first = runs[0]
    for run in runs[1:]:
        for part, key in SAME_FOR_EXTRAP:
            mine, theirs = getattr(first, part).get(key), getattr(run, part).get(key)
            if mine != theirs:
                raise CheckmpiError(f"--format extrap models ranks (p) and cells per rank (n) only: '{run.path}' has "
                                    f"{key} {theirs!r}, '{first.path}' {mine!r}; export them apart")


def to_extrap(runs: list[HaloRun]) -> str:
    """Extra-P JSON Lines: per run, strategy (callpath) and timer (metric), the
    time per step in seconds, max over ranks (what the tables show). Runs must
    differ in ranks and cells only; a strategy that failed validation and a
    timer without a value are left out, each named on standard error."""
    if runs:
        _refuse_mixed(runs)
    names = extrap_parameters(runs)
    lines = []
    for run in runs:
        point = {"p": run.nprocs, "n": _cells(run)}
        params = {name: point[name] for name in names}
        for s in run.ran():
            if not s.valid:
                print(f"checkmpi: warning: {s.id} of '{run.path}' failed validation: left out", file=sys.stderr)
                continue
            empty = [t for t in s.timers if not math.isfinite(s.timers[t].max)] if s.steps else []
            if empty:
                print(f"checkmpi: warning: {s.id} of '{run.path}' has no value for {', '.join(empty)}: left out",
                      file=sys.stderr)
            for timer in s.timers if s.steps else ():
                if timer not in empty:
                    lines.append(json.dumps({"params": params, "callpath": s.id, "metric": f"time_{timer}",
                                             "value": s.timers[timer].max / s.steps}, allow_nan=False))
    return "\n".join(lines) + ("\n" if lines else "")


def export_command(args: argparse.Namespace) -> int:
    """`checkmpi export`: results files as CSV (halo or p2p) or Extra-P input (halo)."""
    halos, p2ps = load_all(args.files)
    if halos and p2ps:
        raise CheckmpiError(f"export writes one kind of results at a time: '{halos[0].path}' is checkmpi-halo, "
                            f"'{p2ps[0].path}' checkmpi-p2p")
    if p2ps and args.format == "extrap":
        raise CheckmpiError(f"--format extrap reads checkmpi-halo results; '{p2ps[0].path}' is checkmpi-p2p "
                            f"({p2ps[0].mode}); use --format csv")
    if p2ps:
        text = p2p_csv(p2ps)
    else:
        text = to_csv(halos) if args.format == "csv" else to_extrap(halos)
    if args.output:
        refuse_inputs(Path(args.output), [Path(f) for f in args.files], "-o")
        write_text(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return 0
