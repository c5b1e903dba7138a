"""`checkmpi campaign report`: the seed's tables from a campaign's records
(scale-up, loop time per submission x size, max / min / ratio, MPI %),
the appendix's summary lines, plots, one HTML page and JSON
(`checkmpi.campaign/1`, schemas/checkmpi.campaign-1.schema.json)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from checkmpi import __version__
from checkmpi import report as R
from checkmpi import tables as T
from checkmpi.campaign.plan import Point, Run, by_submission, points, sweep_points
from checkmpi.atomic import write_json, write_text
from checkmpi.campaign.records import STATUSES, CampaignDir, now_iso
from checkmpi.campaign.sharing import shared_nodes
from checkmpi.campaign.status import run_state
from checkmpi.campaign.spec import Spec, Sweep
from checkmpi.errors import CheckmpiError
from checkmpi.campaign.execute import mismatch
from checkmpi.results import HaloRun, load, x_join

SCHEMA = "checkmpi.campaign/1"
FAILED = ("invalid", "too_slow", "crashed")  # the run ran and failed: "n.a." in the tables
TIME = "{:.4g}"  # times in tables: four significant digits, whatever their unit
SHARED = "*"  # marks a run that shared a node with another of the campaign's at the same time


@dataclass
class Cell:
    """One run as the report sees it."""

    run: Run
    record: dict[str, Any] | None
    status: str  # a record's status, or one of UNRECORDED
    loop: float | None = None  # seconds, max over ranks (ok runs only)
    mpi_percent: float | None = None  # comm / loop, max over ranks
    expected: float | None = None
    slow: bool = False  # ok but slower than spec.slow x expected, or stopped as too slow
    letter: str = ""  # note letter of a run that did not end ok
    context: dict[str, Any] = field(default_factory=dict)
    shared_with: dict[str, list[str]] = field(default_factory=dict)  # runs on a node of this one at the same time
    left_out: bool = False  # shared a node: not in the statistics (report --include-shared keeps it)


@dataclass
class CampaignReport:
    spec: Spec
    cells: dict[str, Cell]
    counts: dict[str, int]
    summary: list[str]
    tables: list[T.Table]
    context: T.Table
    figures: list = field(default_factory=list)
    doc: dict[str, Any] = field(default_factory=dict)


def gather(cdir: CampaignDir, spec: Spec, runs: list[Run], include_shared: bool = False) -> dict[str, Cell]:
    """The cells of `runs`; those that shared a node with another run at the same time are flagged and, unless
    `include_shared`, left out of the statistics."""
    cells: dict[str, Cell] = {}
    letters = 0
    for run in runs:
        record = cdir.read_record(run.id)
        state = run_state(cdir, run.id, None) if record is None else ""
        cell = Cell(run, record, record["status"] if record else state if state in UNRECORDED else "missing")
        if record is not None:
            cell.expected = (record.get("expected") or {}).get("seconds")
        if record is not None and record["status"] == "ok" and record.get("results"):
            halo = load(cdir.root / record["results"])
            if not isinstance(halo, HaloRun):
                raise CheckmpiError(f"'{record['results']}' is not a checkmpi-halo results file")
            result = next((s for s in halo.ran() if s.id == run.strategy), None)
            wrong = mismatch(spec, run, halo)
            if wrong:  # a record is checked against the JSON it points to
                cell.status, cell.record = "invalid", {**record, "status": "invalid", "note": wrong}
            elif result is not None:
                cell.loop = result.timers["loop"].max
                cell.mpi_percent = 100.0 * result.timers["comm"].max / cell.loop if cell.loop > 0 else None
                cell.context = halo.context
        if cell.status == "ok" and cell.expected and record and record.get("elapsed_s") is not None:
            cell.slow = record["elapsed_s"] > spec.slow * cell.expected
        cell.slow = cell.slow or cell.status == "too_slow"
        if cell.status not in ("ok", *UNRECORDED):
            cell.letter = _letter(letters)
            letters += 1
        cells[run.id] = cell
    for run_id, others in shared_nodes(c.record for c in cells.values() if c.record).items():
        cells[run_id].shared_with, cells[run_id].left_out = others, not include_shared
    return cells


# A run without a record: its campaign is running it, was stopped while it ran (campaign status's
# "interrupted": the next `campaign run` runs it again), or has not run it yet ("missing": pending).
UNRECORDED = ("interrupted", "running", "missing")


def status_text(status: str) -> str:
    """A status as tables and summaries say it; "missing" (no record yet, the JSON's word) reads as pending."""
    return "pending" if status == "missing" else status.replace("_", " ")


def _letter(i: int) -> str:
    text = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        text = chr(ord("a") + r) + text
    return text


def _mark(cell: Cell, value: float | None, fmt: str) -> str:
    if cell.status == "ok" and value is not None:
        text = fmt.format(value)
    else:
        text = "n.a." if cell.status in FAILED else "-"
    return text + (f" {SHARED}" if cell.shared_with else "")


def shared_notes(cells: list[Cell]) -> list[str]:
    """A line per flagged run: the nodes and the runs it shared them with."""
    return [f"{SHARED} {c.run.id}: on {', '.join(sorted({n for ns in c.shared_with.values() for n in ns}))} at the "
            f"same time as {', '.join(c.shared_with)}" for c in cells if c.shared_with]


def point_label(sweep: Sweep, p: Point) -> str:
    return x_join(p.size) if sweep.kind == "size" else f"{p.np} ({x_join(p.procs)})"


def _row_name(spec: Spec, k: int, cells: list[Cell]) -> str:
    jobs = []
    for c in cells:
        rec = c.record or {}
        for past in [*rec.get("previous", []), rec]:
            job = past.get("job_id") or (past.get("slurm") or {}).get("job_id")
            if job and job not in jobs:
                jobs.append(job)
    return f"s{k}" + (f" (job{'s' if len(jobs) > 1 else ''} {', '.join(jobs)})" if jobs else "")


def sweep_unit(spec: Spec, cells: dict[str, Cell], sweep: Sweep, strategy: str) -> tuple[str, float]:
    """One time unit for a sweep and strategy, so its tables and plot read alike."""
    loops = [v for p in sweep_points(sweep) for v in _ok_loops(spec, cells, p, strategy, every=True)]
    return T.pick_unit(max(loops, default=0.0))


def per_submission_table(spec: Spec, cells: dict[str, Cell], sweep: Sweep, strategy: str, what: str) -> T.Table:
    """Table 5 (what="loop", with Table 6 below it: max, min, ratio, plus median and spread
    over the ok runs) or Table 7 (what="mpi") for one sweep and strategy."""
    pts = sweep_points(sweep)
    unit, scale = sweep_unit(spec, cells, sweep, strategy)
    title = {"loop": f"Loop time ({unit})", "mpi": "MPI %"}[what]
    every = [cells[Run(k, p, strategy).id] for k in range(1, spec.repetitions + 1) for p in pts]
    table = T.Table(f"{title}, {strategy}, {sweep.name}", ["submission"] + [point_label(sweep, p) for p in pts]
                    + ["note"])
    for k in range(1, spec.repetitions + 1):
        row_cells = [cells[Run(k, p, strategy).id] for p in pts]
        values = [_mark(c, c.loop * scale if what == "loop" and c.loop is not None else c.mpi_percent,
                        TIME if what == "loop" else "{:.1f}%") for c in row_cells]
        notes = ",".join(c.letter for c in row_cells if c.letter) or "-"
        table.rows.append([_row_name(spec, k, row_cells)] + values + [notes])
    if what == "mpi":
        table.caption = "MPI %: comm (pack, MPI calls, unpack, barriers) / loop, max over ranks"
    else:
        table.section_after.add(len(table.rows) - 1)
        stats = [point_stats(_ok_loops(spec, cells, p, strategy)) for p in pts]
        for name, key, fmt, factor in (("max", "max_s", TIME, scale), ("min", "min_s", TIME, scale),
                                       ("ratio", "ratio", "{:.2f}x", 1), ("median", "median_s", TIME, scale),
                                       ("spread", "spread_percent", "{:.1f}%", 1), ("ok runs", "n", "{}", 1)):
            table.rows.append([name] + [fmt.format(s[key] * factor) if s[key] is not None else "-" for s in stats]
                              + [""])
        table.caption = ("loop: the timed loop, max over ranks; below, over the ok runs: ratio = max / min, "
                         "spread = standard deviation / mean")
    table.caption += "; n.a.: the run failed (see its note); -: not run (not started, or pending)"
    notes = shared_notes(every)
    if notes:
        kept = not any(c.left_out for c in every)
        table.caption += (f"; {SHARED}: the run shared a node with another of the campaign's runs at the same time"
                          + (" (kept in the statistics: --include-shared)" if kept else
                             ", left out of the statistics (report --include-shared keeps it)"))
        table.caption = "\n".join([table.caption, *notes])
    return table


def point_stats(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "median_s": None, "min_s": None, "max_s": None, "ratio": None, "spread_percent": None}
    med = statistics.median(values)
    spread = 100.0 * statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else None
    return {"n": len(values), "median_s": med, "min_s": min(values), "max_s": max(values),
            "ratio": max(values) / min(values) if min(values) > 0 else None, "spread_percent": spread}


def _ok_loops(spec: Spec, cells: dict[str, Cell], p: Point, strategy: str, every: bool = False) -> list[float]:
    """The loop times of the ok runs of a point that the statistics count (`every`: left out or not)."""
    out = []
    for k in range(1, spec.repetitions + 1):
        c = cells[Run(k, p, strategy).id]
        if c.loop is not None and (every or not c.left_out):
            out.append(c.loop)
    return out


def scaleup(spec: Spec, cells: dict[str, Cell], sweep: Sweep) -> list[dict[str, Any]]:
    """Per point: the nodes its runs ran on (their results' context; the most where they differ, None without a
    run's results), median loop time of every strategy and weak-scaling efficiency T(first point) / T."""
    rows = []
    base: dict[str, float] = {}
    for p in sweep_points(sweep):
        ran = [int(c.context["nodes"]) for c in cells.values() if c.run.point == p and c.context.get("nodes")]
        row: dict[str, Any] = {"point": p.id, "np": p.np, "procs": list(p.procs), "nodes": max(ran, default=None),
                               "strategies": {}}
        for s in spec.strategies:
            med = point_stats(_ok_loops(spec, cells, p, s))["median_s"]
            if med is not None and s not in base:
                base[s] = med  # type: ignore[assignment]
            eff = base[s] / med if med and s in base else None  # type: ignore[operator]
            row["strategies"][s] = {"median_s": med, "efficiency": eff}
        rows.append(row)
    return rows


def scaleup_table(spec: Spec, cells: dict[str, Cell], sweep: Sweep) -> T.Table:
    """Table 4: time per strategy against ranks (and the nodes they ran on, where any ran on several), with parallel
    (weak-scaling) efficiency."""
    rows = scaleup(spec, cells, sweep)
    unit, scale = T.pick_unit(max((r["strategies"][s]["median_s"] or 0.0 for r in rows for s in spec.strategies),
                                  default=0.0))
    nodes = any((r["nodes"] or 1) > 1 for r in rows)
    headers = ["ranks", "grid"] + (["nodes"] if nodes else [])
    for s in spec.strategies:
        headers += [f"{s} ({unit})", f"{s} eff."]
    table = T.Table(f"Scale-up, {sweep.name}", headers, left_columns=3 if nodes else 2)
    for row in rows:
        cells_out = [str(row["np"]), x_join(row["procs"])]
        if nodes:
            cells_out.append(str(row["nodes"]) if row["nodes"] is not None else "-")
        for s in spec.strategies:
            v = row["strategies"][s]
            cells_out += [TIME.format(v["median_s"] * scale) if v["median_s"] is not None else "-",
                          f"{100 * v['efficiency']:.3g}%" if v["efficiency"] is not None else "-"]
        table.rows.append(cells_out)
    table.caption = ("median loop time over the submissions' ok runs; the size per rank is fixed, so ideal is a "
                     "flat time; efficiency = time at the first point / time at this one" +
                     ("; nodes: where the point's runs ran (their results)" if nodes else ""))
    if any(c.left_out for c in cells.values() if c.run.point in sweep_points(sweep)):
        table.caption += f"; runs that shared a node ({SHARED} in the tables below) are left out"
    return table


def failures_table(cells: dict[str, Cell]) -> T.Table:
    table = T.Table("Notes: runs that did not end ok", ["note", "run", "status", "what happened"], left_columns=4)
    for c in cells.values():
        if not c.letter:
            continue
        rec = c.record or {}
        table.rows.append([c.letter, c.run.id, c.status, rec.get("note") or ""])
        for rank, lines in (rec.get("errors") or {}).items():
            who = "launcher" if rank == "launcher" else f"rank {rank}"
            for line in lines[-3:]:
                table.rows.append(["", "", "", f"{who}: {line}"])
        table.section_after.add(len(table.rows) - 1)
    return table


def submissions_table(spec: Spec, cells: dict[str, Cell]) -> tuple[T.Table, list[dict[str, Any]]]:
    table = T.Table("Submissions", ["submission", "ok", "failed", "not started", "pending", "slower than expected",
                                    "verdict"], left_columns=1)
    subs = []
    groups = by_submission(cells.values(), lambda c: c.run.submission)
    for k in range(1, spec.repetitions + 1):
        mine = groups.get(k, [])
        n = {s: sum(1 for c in mine if c.status == s) for s in (*STATUSES, *UNRECORDED)}
        failed = sum(n[s] for s in FAILED)
        slow = sum(1 for c in mine if c.slow)
        if n["not_started"] == len(mine):
            verdict = "did not start"
        elif n["ok"] == len(mine):
            verdict = "every run ok" + ("" if not slow else f", {slow} slower than expected")
        else:
            verdict = "; ".join(f"{n[s]} {status_text(s)}" for s in (*FAILED, "not_started", *UNRECORDED) if n[s])
        jobs = _row_name(spec, k, mine)
        table.rows.append([jobs, str(n["ok"]), str(failed), str(n["not_started"]), str(n["missing"]), str(slow),
                           verdict])
        subs.append({"submission": k, "label": jobs, "runs": len(mine), "ok": n["ok"], "failed": failed,
                     "not_started": n["not_started"], "missing": n["missing"], "interrupted": n["interrupted"],
                     "running": n["running"], "slower_than_expected": slow,
                     "verdict": verdict})
    table.caption = (f"failed: invalid, too slow or crashed; slower than expected: an ok run whose wall time was "
                     f"above {spec.slow:g} x its expected time, or one stopped as too slow")
    return table, subs


def summary_lines(spec: Spec, cells: dict[str, Cell], subs: list[dict[str, Any]], counts: dict[str, int]) -> list[str]:
    """The appendix's bullets: how many submissions failed, were slow, did not start."""
    n = len(subs)

    def share(count: int, what: str) -> str:
        return f"{count}/{n} submissions ({100 * count / n:.0f}%) {what}"

    groups = by_submission(cells.values(), lambda c: c.run.submission)
    by_sub = {s["submission"]: groups.get(s["submission"], []) for s in subs}
    lines = [
        f"{counts['ok']}/{counts['runs']} runs ok; " + ", ".join(
            f"{counts[s]} {status_text(s)}" for s in (*FAILED, "not_started", *UNRECORDED)
            if s not in ("interrupted", "running") or counts[s]),
        share(sum(1 for s in subs if s["verdict"] == "did not start"), "did not start at all"),
        share(sum(1 for s in subs if any(c.status == "too_slow" for c in by_sub[s["submission"]])),
              f"had a run stopped as too slow (over {spec.too_slow:g} x its expected time, or at the time limit)"),
        share(sum(1 for s in subs if s["failed"]), "failed at least one run (invalid, too slow or crashed)"),
        share(sum(1 for s in subs if s["slower_than_expected"]),
              f"had at least one run slower than {spec.slow:g} x its expected time"),
        share(sum(1 for s in subs if s["ok"] == s["runs"]), "ran every point correctly, regardless of time"),
        share(sum(1 for s in subs if s["ok"] == s["runs"] and not s["slower_than_expected"]),
              "ran every point correctly and in the expected time"),
        f"runs retried: {counts['retried_runs']} ({counts['attempts']} attempts in all)",
        f"runs that shared a node with another of the campaign's runs at the same time: {counts['shared']}"
        + ("" if not counts["shared"] else f" (marked {SHARED}; " + (
            "left out of the statistics, report --include-shared keeps them)"
            if any(c.left_out for c in cells.values()) else "kept in the statistics: --include-shared)")),
    ]
    return lines


def _counts(cells: dict[str, Cell]) -> dict[str, int]:
    counts = {s: sum(1 for c in cells.values() if c.status == s) for s in (*STATUSES, *UNRECORDED)}
    counts["runs"] = len(cells)
    counts["retried_runs"] = sum(1 for c in cells.values() if c.record and c.record["attempt"] > 1)
    counts["attempts"] = sum(c.record["attempt"] for c in cells.values() if c.record)
    counts["shared"] = sum(1 for c in cells.values() if c.shared_with)
    return counts


def build(cdir: CampaignDir, spec: Spec, runs: list[Run], include_shared: bool = False) -> CampaignReport:
    """Tables, summary and JSON of the campaign; its figures come from checkmpi.campaign.plots (all_plots).
    Runs that shared a node with another at the same time are left out of the statistics unless
    `include_shared`."""
    cells = gather(cdir, spec, runs, include_shared)
    counts = _counts(cells)
    subs_table, subs = submissions_table(spec, cells)
    summary = summary_lines(spec, cells, subs, counts)
    tables = [T.Table("Summary", [""], rows=[[line] for line in summary]), subs_table]
    for sweep in spec.sweeps:
        if sweep.kind == "scale":
            tables.append(scaleup_table(spec, cells, sweep))
        for s in spec.strategies:
            tables += [per_submission_table(spec, cells, sweep, s, "loop"),
                       per_submission_table(spec, cells, sweep, s, "mpi")]
    if any(c.letter for c in cells.values()):
        tables.append(failures_table(cells))
    rep = CampaignReport(spec, cells, counts, summary, tables, context_table(cdir, spec, cells))
    rep.doc = to_json(cdir, spec, cells, counts, subs, summary, include_shared)
    return rep


def context_table(cdir: CampaignDir, spec: Spec, cells: dict[str, Cell]) -> T.Table:
    ctx = next((c.context for c in cells.values() if c.context), {})
    launchers = sorted({(c.record.get("launch") or {}).get("launcher", "") for c in cells.values()
                        if c.record and c.record.get("launch")})
    nodes = sorted({n for c in cells.values() if c.record for n in c.record.get("nodes") or []})
    rows = [("campaign", f"{spec.name} ({cdir.root})"), ("spec", str(spec.path)),
            ("executor", spec.executor + (f", {spec.ranks_per_node} ranks per node" if spec.ranks_per_node else "")),
            ("launcher", ", ".join(launchers) or "-"), ("nodes", ", ".join(nodes[:16]) or "-"),
            ("MPI library", str(ctx.get("mpi_library", "-"))),
            ("runs", f"{spec.repetitions} submissions x {len(points(spec))} points x {len(spec.strategies)} "
                     f"strategies, {spec.itfin} steps each")]
    table = T.Table("Campaign", ["", ""], rows=[[k, v] for k, v in rows], left_columns=2)
    return table


def to_json(cdir: CampaignDir, spec: Spec, cells: dict[str, Cell], counts: dict[str, int],
            subs: list[dict[str, Any]], summary: list[str], include_shared: bool = False) -> dict[str, Any]:
    runs = []
    for c in cells.values():
        rec = c.record or {}
        expected = rec.get("expected") or {}
        runs.append({"run": c.run.id, "submission": c.run.submission, "point": c.run.point.id,
                     "strategy": c.run.strategy, "status": c.status, "attempts": rec.get("attempt", 0),
                     "loop_s": c.loop, "mpi_percent": c.mpi_percent, "elapsed_s": rec.get("elapsed_s"),
                     "expected_s": expected.get("seconds"), "expected_from": expected.get("kind"),
                     "slower_than_expected": c.slow, "note_letter": c.letter or None, "note": rec.get("note"),
                     "errors": rec.get("errors") or {}, "job_id": (rec.get("slurm") or {}).get("job_id"),
                     "nodes": rec.get("nodes") or [], "record": cdir.rel(cdir.record_path(c.run.id))
                     if c.record else None, "shared_node_with": list(c.shared_with),
                     "shared_nodes": sorted({n for ns in c.shared_with.values() for n in ns}),
                     "in_stats": c.loop is not None and not c.left_out})
    stats = [{"point": p.id, "strategy": s, **point_stats(_ok_loops(spec, cells, p, s))}
             for p in points(spec) for s in spec.strategies]
    return {"schema": SCHEMA, "generated": now_iso(), "tool": f"checkmpi {__version__}",
            "campaign": {"name": spec.name, "dir": str(cdir.root), "spec": str(spec.path), "executor": spec.executor,
                         "repetitions": spec.repetitions, "strategies": list(spec.strategies), "itfin": spec.itfin,
                         "ranks_per_node": spec.ranks_per_node, "too_slow": spec.too_slow,
                         "too_slow_min_s": spec.too_slow_min_s, "slow": spec.slow,
                         "time_limits_s": list(spec.time_limits), "include_shared": include_shared},
            "points": [p.as_json() for p in points(spec)],
            "sweeps": [{"index": sw.index, "kind": sw.kind, "name": sw.name,
                        "points": [p.id for p in sweep_points(sw)]} for sw in spec.sweeps],
            "counts": counts, "summary": summary, "submissions": subs, "runs": runs, "stats": stats,
            "scaleup": [{"sweep": sw.index, "rows": scaleup(spec, cells, sw)} for sw in spec.sweeps
                        if sw.kind == "scale"]}


def print_report(rep: CampaignReport, out: Console) -> None:
    for table in [rep.context, *rep.tables]:
        T.render(table, out)


def write_json_report(rep: CampaignReport, path: Path) -> None:
    write_json(path, rep.doc)


def write_html_report(rep: CampaignReport, path: Path) -> None:
    page = R.Report(contexts=[rep.context], html_tables=rep.tables, figures=rep.figures)
    write_text(path, R.to_html(page, f"checkmpi campaign: {rep.spec.name}"))
